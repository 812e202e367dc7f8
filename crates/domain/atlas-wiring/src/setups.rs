//! Setups left half-done, found and told: the demo, and a migration stopped before its end.
//!
//! The demo app is written whole (`atlas_service::demo_graph`), and so is every import; what
//! can still be found half made is a demo an older Atlas left (its app, or its knowledge base
//! created without its questions), and a migration, which copies more than one append can hold:
//! it marks the store it fills ([`MIGRATING`]) before its first write and clears the mark after
//! its last, so that nothing serves a half-copied store and running it again completes it.

use std::path::Path;

use anyhow::{Result, bail};
use atlas_service::Atlas;
use atlas_store::files::Files;

use crate::StoreAddress;

/// The mark of a migration under way, in the files of the store it fills.
pub(crate) const MIGRATING: &str = ".atlas/migrating.json";

/// What a migration under way wrote in its mark.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct Migrating {
    /// Where it copies from, as [`shown`] says it.
    pub from: String,
    /// When it began (RFC 3339).
    pub started_at: String,
}

/// `address` as a mark or a message may show it: a database's address without its password.
pub(crate) fn shown(address: &StoreAddress) -> String {
    match address {
        StoreAddress::Folder(dir) => dir.display().to_string(),
        StoreAddress::Postgres(url) => match url.split_once("://") {
            Some((scheme, rest)) => match rest.rsplit_once('@') {
                Some((user, host)) => {
                    let user = user.split(':').next().unwrap_or_default();
                    format!("{scheme}://{user}@{host}")
                }
                None => url.clone(),
            },
            None => url.clone(),
        },
    }
}

/// The migration a store's files say is under way, if any.
pub(crate) fn migrating(files: &dyn Files) -> Result<Option<Migrating>> {
    let Some(bytes) = files.read(MIGRATING)? else {
        return Ok(None);
    };
    match serde_json::from_slice(&bytes) {
        Ok(mark) => Ok(Some(mark)),
        Err(e) => {
            bail!("{MIGRATING} cannot be read ({e}): a migration into this store was stopped")
        }
    }
}

/// Refuses to serve a store a migration was filling when it stopped: it holds part of the copy.
pub(crate) fn refuse_half_migrated(files: &dyn Files, store: &str) -> Result<()> {
    if let Some(mark) = migrating(files)? {
        bail!(
            "{store} holds part of a migration from {} that began {} and was stopped: run `atlas \
             migrate --from {} --to …` again to complete it",
            mark.from,
            mark.started_at,
            mark.from
        );
    }
    Ok(())
}

/// The setups found half-done in the graph `atlas` (on the folder `data`, or the files of
/// `files` for a database), each with whether it was repaired (with `repair`, what can be).
pub async fn setups_half_done(
    atlas: &Atlas,
    data: &Path,
    files: &dyn Files,
    repair: bool,
) -> Result<Vec<(String, bool)>> {
    let mut found = Vec::new();
    if let Some(mark) = migrating(files)? {
        found.push((
            format!(
                "a migration from {} that began {} was stopped before its end: run `atlas \
                 migrate --from {} --to …` again to complete it",
                mark.from, mark.started_at, mark.from
            ),
            false,
        ));
    }
    if atlas.read(|g| g.app(atlas_service::DEMO_APP_ID).is_some()) {
        let built = atlas_service::demo_app().await?;
        let missing = atlas.missing(&built);
        if !missing.is_none() {
            let repaired = repair && atlas.add_missing(built).await.is_ok();
            let what = if repaired {
                "completed"
            } else {
                "`atlas serve --demo` or `atlas fsck --repair` completes it"
            };
            found.push((
                format!(
                    "the demo app {} is incomplete ({missing}), set up by a start that was \
                     stopped: {what}",
                    atlas_service::DEMO_APP_ID
                ),
                repaired,
            ));
        }
    }
    if atlas_kb::demo::is_incomplete(&data.join("kb")) {
        found.push((
            format!(
                "the demo knowledge base {} has no questions yet, set up by a start that was \
                 stopped: `atlas serve --demo` completes it",
                atlas_kb::demo::DEMO_DATASET_ID
            ),
            false,
        ));
    }
    Ok(found)
}

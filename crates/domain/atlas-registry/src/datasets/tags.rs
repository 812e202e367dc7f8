//! Knowledge tags. They belong to the whole server: changing them takes the server token (when
//! there is one), as creating datasets does; a dataset's own key may list them too (and bind
//! them to its dataset), as Dify's clients do with one key.

use atlas_api::dify::{
    self, BindTagsRequest, DatasetTagList, DifyError, RenameTagRequest, Success, Tag, TagIdRequest,
    TagName, TagNameRequest, UnbindTagRequest,
};
use atlas_api::routes::{Caller, Nothing};

use super::{Admit, Admitted, Datasets, Serve};

fn tag(tag: atlas_kb::Tag, bound: usize) -> Tag {
    Tag {
        id: tag.id,
        name: tag.name,
        kind: "knowledge".into(),
        binding_count: bound as u64,
    }
}

/// Tags are the server's: what opens every dataset lists them, and so does any dataset's key.
impl Admit<dify::ListTags> for Datasets {
    fn admit(&self, caller: Caller, path: Nothing) -> Result<Admitted<dify::ListTags>, DifyError> {
        self.open_tags(&caller)?;
        Ok(Admitted::new(caller, path))
    }
}

impl Serve<dify::ListTags> for Datasets {
    fn serve(
        &self,
        _: Admitted<dify::ListTags>,
        _: Nothing,
        _: Nothing,
    ) -> Result<Vec<Tag>, DifyError> {
        Ok(self.kb.tags().into_iter().map(|(t, n)| tag(t, n)).collect())
    }
}

impl Serve<dify::CreateTag> for Datasets {
    fn serve(
        &self,
        _: Admitted<dify::CreateTag>,
        _: Nothing,
        body: TagNameRequest,
    ) -> Result<Tag, DifyError> {
        Ok(tag(self.kb.create_tag(&body.name)?, 0))
    }
}

impl Serve<dify::RenameTag> for Datasets {
    fn serve(
        &self,
        _: Admitted<dify::RenameTag>,
        _: Nothing,
        body: RenameTagRequest,
    ) -> Result<Tag, DifyError> {
        let renamed = self.kb.rename_tag(&body.tag_id, &body.name)?;
        let bound = self
            .kb
            .tags()
            .iter()
            .find(|(t, _)| t.id == renamed.id)
            .map_or(0, |(_, n)| *n);
        Ok(tag(renamed, bound))
    }
}

impl Serve<dify::DeleteTag> for Datasets {
    fn serve(
        &self,
        _: Admitted<dify::DeleteTag>,
        _: Nothing,
        body: TagIdRequest,
    ) -> Result<Success, DifyError> {
        self.kb.delete_tag(&body.tag_id)?;
        Ok(Success::default())
    }
}

/// Binding and unbinding name their dataset in the body: a key is needed to be admitted, and it
/// is checked against that dataset once the body is read.
impl Admit<dify::BindTags> for Datasets {
    fn admit(&self, caller: Caller, path: Nothing) -> Result<Admitted<dify::BindTags>, DifyError> {
        Self::key(&caller)?;
        Ok(Admitted::new(caller, path))
    }
}

impl Admit<dify::UnbindTag> for Datasets {
    fn admit(&self, caller: Caller, path: Nothing) -> Result<Admitted<dify::UnbindTag>, DifyError> {
        Self::key(&caller)?;
        Ok(Admitted::new(caller, path))
    }
}

impl Serve<dify::BindTags> for Datasets {
    fn serve(
        &self,
        admitted: Admitted<dify::BindTags>,
        _: Nothing,
        body: BindTagsRequest,
    ) -> Result<Success, DifyError> {
        self.open_dataset(&admitted.caller, &body.target_id)?;
        self.kb.bind_tags(&body.target_id, &body.tag_ids)?;
        Ok(Success::default())
    }
}

impl Serve<dify::UnbindTag> for Datasets {
    fn serve(
        &self,
        admitted: Admitted<dify::UnbindTag>,
        _: Nothing,
        body: UnbindTagRequest,
    ) -> Result<Success, DifyError> {
        self.open_dataset(&admitted.caller, &body.target_id)?;
        self.kb.unbind_tag(&body.target_id, &body.tag_id)?;
        Ok(Success::default())
    }
}

impl Serve<dify::DatasetTags> for Datasets {
    fn serve(
        &self,
        admitted: Admitted<dify::DatasetTags>,
        _: Nothing,
        _: Nothing,
    ) -> Result<DatasetTagList, DifyError> {
        let tags = self.kb.dataset_tags(&admitted.path.dataset_id)?;
        Ok(DatasetTagList {
            total: tags.len() as u64,
            data: tags
                .into_iter()
                .map(|t| TagName {
                    id: t.id,
                    name: t.name,
                })
                .collect(),
        })
    }
}

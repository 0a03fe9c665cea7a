//! The files lexicon's behaviour request: what an engine is told about declared files.
//!
//! Each declared file is an entity of kind `file` named by its path, with two properties: its
//! mode (`0644`) and its size in bytes. The content is never sent: a configuration file is exactly
//! where a credential lives, and an engine needs to know how much there is, not what it says. An
//! env that binds no root resolves to no concrete target, so every file is withheld as
//! `no-binding`. Files have no references to each other, so the edges are computed and empty.

use super::report::{Unpredicted, UnpredictedReason};
use super::request::{Ask, Request, RequestEntity, TrafficLevel};
use crate::lexicon::files::{COMPONENT, FILE_KIND, FilesLexicon, format_mode};

/// The property keys of a file entity.
pub mod property {
    /// The permission bits, four octal digits.
    pub const MODE: &str = "mode";
    /// The content's length in bytes.
    pub const BYTES: &str = "bytes";
}

/// Builds the ask for every file `lexicon` declares, at `traffic`, under the lexicon name
/// `files`.
pub fn files_ask(lexicon: &FilesLexicon, traffic: TrafficLevel) -> Ask {
    let files = lexicon.declaration().files();
    let mut request = Request::new(COMPONENT, traffic);
    if lexicon.root().is_none() {
        let detail = format!("env {} binds no files root", lexicon.env());
        let withheld = files
            .keys()
            .map(|path| (path.clone(), Unpredicted::new(UnpredictedReason::NoBinding).detail(detail.clone())))
            .collect();
        return Ask { request, withheld };
    }
    for (path, file) in files {
        request = request.entity(
            RequestEntity::new(path.clone(), FILE_KIND)
                .prop(property::MODE, format_mode(file.mode))
                .prop(property::BYTES, file.content.len()),
        );
    }
    Ask::new(request.edges(Vec::new()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexicon::files::FilesDeclaration;

    fn declaration() -> FilesDeclaration {
        FilesDeclaration::new().file("app.conf", "password = hunter2\n", 0o600).file("bin/run", "#!/bin/sh\n", 0o755)
    }

    #[test]
    fn files_are_sent_by_mode_and_size_never_by_content() {
        let lexicon = FilesLexicon::new("staging", Some("/srv/x".into()), declaration());
        let ask = files_ask(&lexicon, TrafficLevel::rps(10.0).unwrap());
        assert!(ask.withheld.is_empty());
        let json = serde_json::to_string(&ask.request).unwrap();
        assert!(!json.contains("hunter2"), "{json}");
        assert_eq!(ask.request.entities[0].props["mode"], "0600");
        assert_eq!(ask.request.entities[0].props["bytes"], 19);
        assert_eq!(ask.request.edges, Some(Vec::new()));
    }

    #[test]
    fn an_unbound_env_withholds_every_file_as_no_binding() {
        let lexicon = FilesLexicon::new("staging", None, declaration());
        let ask = files_ask(&lexicon, TrafficLevel::rps(10.0).unwrap());
        assert!(ask.request.entities.is_empty());
        assert_eq!(ask.withheld.len(), 2);
        assert!(ask.withheld.values().all(|u| u.reason == UnpredictedReason::NoBinding));
    }
}

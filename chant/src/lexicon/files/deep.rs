//! The files lexicon's deep read: per declared file found present, its declared and live
//! property trees (`type`, `mode`, `uid`, `gid`, `size`, `content`), and for a file declared as a
//! JSON or TOML document its own keys under `document` in place of size and digest.
//!
//! Files record no writer per field, so there are no field owners: an unclaimed path says
//! `source: claimed-fields`. The substrate writes an owner on every file, so `uid` and `gid`
//! are the lexicon's prune table, dropped unless the declaration names an owner
//! ([`FilesDeclaration::owner`](super::FilesDeclaration::owner)). A live document that does not
//! parse has no `document` tree, so each of its declared keys drifts with no live value.

use std::fs;

use serde_json::{Map, Value, json};

use super::confine::{self, Parent, Target};
use super::declaration::{self, FILE_KIND, format_mode, property};
use super::reading::{Live, LiveFile};
use super::{COMPONENT, FilesLexicon, read_regular};
use crate::observe::deep::{DeepEntity, DeepObservation};
use crate::observe::{DeclaredEntity, LexiconError};

/// The paths the filesystem writes on every file: pruned unless declared.
pub(super) const SUBSTRATE_WRITTEN: &[&str] = &[property::UID, property::GID];

impl FilesLexicon {
    fn live_entry(&self, real_root: &std::path::Path, name: &str, document: bool) -> Option<Live> {
        declaration::check_path(name).ok()?;
        let Ok(Parent::Dir(dir)) = confine::parent(real_root, name, false) else { return None };
        let file_name = confine::file_name(name);
        match confine::inspect(real_root, &dir, file_name, name) {
            Ok(Target::File(checked)) => {
                let (content, _) = read_regular(&dir.join(file_name), &checked).ok()?;
                let digest = declaration::content_digest(&content).ok();
                Some(Live::File(LiveFile::new(&checked, &content, digest, document)))
            }
            Ok(Target::Symlink) => Some(Live::Symlink),
            _ => None,
        }
    }

    /// Reads the deep trees of every declared file present: from what the thin read just before
    /// kept ([`super::reading`]), else from the filesystem.
    pub(super) fn deep(&self, declared: &[DeclaredEntity]) -> Result<DeepObservation, LexiconError> {
        let mut out = DeepObservation::default();
        let mut kept = self.readings.take();
        let Some(root) = &self.root else { return Ok(out) };
        let Ok(real_root) = fs::canonicalize(root) else { return Ok(out) };
        for entity in declared {
            let Some(file) = self.declaration.files().get(&entity.name) else { continue };
            let format = self.declaration.document_format(&entity.name);
            let live = match kept.as_mut().and_then(|k| k.remove(&entity.name)) {
                Some(live) => live,
                None => self.live_entry(&real_root, &entity.name, format.is_some()),
            };
            let Some(live) = live else { continue };
            let owner = self.declaration.declared_owner(&entity.name);
            let mut want = Map::new();
            want.insert(property::TYPE.into(), json!(FILE_KIND));
            want.insert(property::MODE.into(), json!(format_mode(file.mode)));
            if let Some((uid, gid)) = owner {
                want.insert(property::UID.into(), json!(uid));
                want.insert(property::GID.into(), json!(gid));
            }
            match format {
                Some(format) => {
                    let document = format.parse(&file.content).map_err(|detail| LexiconError::InvalidDeclaration {
                        lexicon: COMPONENT.to_owned(),
                        detail: format!("{} is declared as a {} document: {detail}", entity.name, format.as_str()),
                    })?;
                    want.insert(property::DOCUMENT.into(), document);
                }
                None => {
                    want.insert(property::SIZE.into(), json!(file.content.len()));
                    // The declared entity carries the digest the thin side computed: no second
                    // hash of every declared file (an entity built by hand without one gets it here).
                    let digest = match entity.properties.get(property::CONTENT) {
                        Some(digest) => digest.clone(),
                        None => declaration::declared_digest(&entity.name, &file.content)
                            .map_err(|e| LexiconError::read_failed(COMPONENT, e.to_string(), e))?,
                    };
                    want.insert(property::CONTENT.into(), json!(digest));
                }
            }
            let got = match live {
                Live::Symlink => json!({ property::TYPE: "symlink" }),
                Live::File(live) => {
                    let mut got = Map::new();
                    got.insert(property::TYPE.into(), json!(FILE_KIND));
                    got.insert(property::MODE.into(), json!(format_mode(live.mode)));
                    got.insert(property::UID.into(), json!(live.uid));
                    got.insert(property::GID.into(), json!(live.gid));
                    match format {
                        Some(format) => {
                            if let Some(Ok(document)) = live.document.as_deref().map(|c| format.parse(c)) {
                                got.insert(property::DOCUMENT.into(), document);
                            }
                        }
                        None => {
                            got.insert(property::SIZE.into(), json!(live.size));
                            if let Some(digest) = live.digest {
                                got.insert(property::CONTENT.into(), json!(digest));
                            }
                        }
                    }
                    Value::Object(got)
                }
            };
            out.entities.insert(
                entity.name.clone(),
                DeepEntity {
                    kind: Some(FILE_KIND.into()),
                    declared: Value::Object(want),
                    live: got,
                    field_owners: None,
                    subentities: Default::default(),
                },
            );
        }
        Ok(out)
    }
}

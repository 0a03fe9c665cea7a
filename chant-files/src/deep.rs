//! The files lexicon's deep read: per declared file found present, its declared and live
//! property trees (`type`, `mode`, `uid`, `gid`, `size`, `content`), and for a file declared as a
//! JSON or TOML document its own keys under `document` in place of size and digest.
//!
//! Files record no writer per field, so there are no field owners: an unclaimed path says
//! `source: claimed-fields`. The substrate writes an owner on every file, so `uid` and `gid`
//! are the lexicon's prune table, dropped unless the declaration names an owner
//! ([`FilesDeclaration::owner`](super::FilesDeclaration::owner)). A live document that does not
//! parse has no `document` tree, so each of its declared keys drifts with no live value.

use std::collections::BTreeMap;
use std::fs;

use serde_json::{Map, Value, json};

use super::confine::{self, Parent, Target};
use super::declaration::{self, FILE_KIND, format_mode, property};
use super::reading::{Live, LiveFile};
use super::{COMPONENT, FilesLexicon, read_regular};
use chant_lexicon::observe::deep::path::Pattern;
use chant_lexicon::observe::deep::{ComponentDeep, DeepEntity, DeepObservation, EntityDeep, classify};
use chant_lexicon::observe::{DeclaredEntity, LexiconError};

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
        self.each_deep(declared, false, |name, read| {
            if let DeepRead::Trees(entity) = read {
                out.entities.insert(name.to_owned(), entity);
            }
        })?;
        Ok(out)
    }

    /// The deep verdict of every declared file present, classified: what
    /// [`classify_all`](chant_lexicon::observe::deep::classify_all) makes of [`FilesLexicon::deep`], without the property trees of a plain
    /// file that is exactly as declared (its verdict is known: nothing to report).
    pub(super) fn deep_classified(&self, declared: &[DeclaredEntity]) -> Result<ComponentDeep, LexiconError> {
        let prune: Vec<Pattern> = SUBSTRATE_WRITTEN.iter().map(|p| Pattern::parse(p)).collect();
        let mut entities: Vec<EntityDeep> = Vec::with_capacity(declared.len());
        self.each_deep(declared, true, |name, read| {
            entities.push(match read {
                DeepRead::Clean => EntityDeep {
                    entity: name.to_owned(),
                    kind: Some(FILE_KIND.into()),
                    drift: Vec::new(),
                    unclaimed: Vec::new(),
                    baselined: Vec::new(),
                    subentities: BTreeMap::new(),
                },
                DeepRead::Trees(entity) => classify(name, &entity, &prune),
            });
        })?;
        // By name, as the trees' map orders (and dedups: the last one read wins) them; declared
        // entities come sorted and unique, so this is one pass.
        if !entities.is_sorted_by(|a, b| a.entity < b.entity) {
            let mut by_name = BTreeMap::new();
            for entity in entities {
                by_name.insert(entity.entity.clone(), entity);
            }
            entities = by_name.into_values().collect();
        }
        Ok(ComponentDeep { component: COMPONENT.to_owned(), entities, unavailable: None })
    }

    /// Reads each declared file present for the deep read and hands `found` its trees, or
    /// [`DeepRead::Clean`] when `shortcut` is set and the file is plain and exactly as declared.
    fn each_deep(
        &self,
        declared: &[DeclaredEntity],
        shortcut: bool,
        mut found: impl FnMut(&str, DeepRead),
    ) -> Result<(), LexiconError> {
        let mut kept = self.readings.take();
        let Some(root) = &self.root else { return Ok(()) };
        let Ok(real_root) = fs::canonicalize(root) else { return Ok(()) };
        for entity in declared {
            let Some(file) = self.declaration.files().get(&entity.name) else { continue };
            let format = self.declaration.document_format(&entity.name);
            let live = match kept.as_mut().and_then(|k| k.remove(&entity.name)) {
                Some(live) => live,
                None => self.live_entry(&real_root, &entity.name, format.is_some()),
            };
            let Some(live) = live else { continue };
            let owner = self.declaration.declared_owner(&entity.name);
            if shortcut && format.is_none() && in_sync(entity, file, owner, &live) {
                found(&entity.name, DeepRead::Clean);
                continue;
            }
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
            found(
                &entity.name,
                DeepRead::Trees(DeepEntity {
                    kind: Some(FILE_KIND.into()),
                    declared: Value::Object(want),
                    live: got,
                    field_owners: None,
                    subentities: Default::default(),
                }),
            );
        }
        Ok(())
    }
}

/// What the deep read found of one declared file.
enum DeepRead {
    /// A plain file exactly as declared: nothing to report (only with the shortcut).
    Clean,
    /// Its declared and live trees, for core to classify.
    Trees(DeepEntity),
}

/// True when the plain (not document) file `live` is exactly as `declared` and `file` say:
/// a regular file with the declared mode, size and content digest (and owner, when declared).
/// Its trees would classify to nothing: every declared leaf equal, and the only other live
/// leaves (`uid`, `gid`) pruned as substrate-written.
fn in_sync(entity: &DeclaredEntity, file: &super::DeclaredFile, owner: Option<(u32, u32)>, live: &Live) -> bool {
    let Live::File(live) = live else { return false };
    let Some(digest) = &live.digest else { return false };
    let declared_digest = match entity.properties.get(property::CONTENT) {
        Some(declared) => declared == digest,
        None => declaration::declared_digest(&entity.name, &file.content).is_ok_and(|d| &d == digest),
    };
    declared_digest
        && live.mode == file.mode
        && live.size == file.content.len()
        && owner.is_none_or(|(uid, gid)| (live.uid, live.gid) == (uid, gid))
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;
    use crate::{DocumentFormat, FilesDeclaration};
    use chant_lexicon::observe::deep::classify_all;
    use chant_lexicon::observe::{Lexicon, observe_component};

    /// The classified shortcut and core's classification of the trees, each after its own thin
    /// read (which keeps what the deep read reads) and without one.
    fn both(lexicon: &FilesLexicon) -> [(ComponentDeep, ComponentDeep); 2] {
        both_of(lexicon, &lexicon.declared().unwrap())
    }

    fn both_of(lexicon: &FilesLexicon, declared: &[DeclaredEntity]) -> [(ComponentDeep, ComponentDeep); 2] {
        let slow = |thin: bool| {
            if thin {
                let _ = observe_component(lexicon, declared);
            }
            classify_all(COMPONENT, &lexicon.deep(declared).unwrap(), SUBSTRATE_WRITTEN)
        };
        let fast = |thin: bool| {
            if thin {
                let _ = observe_component(lexicon, declared);
            }
            lexicon.deep_classified(declared).unwrap()
        };
        [(fast(true), slow(true)), (fast(false), slow(false))]
    }

    #[test]
    fn the_classified_shortcut_is_the_classification_of_the_trees_in_sync_or_not() {
        let root = tempfile::tempdir().unwrap();
        let uid = nix::unistd::getuid().as_raw();
        let gid = nix::unistd::getgid().as_raw();
        let declaration = FilesDeclaration::new()
            .file("same.conf", "a = 1\n", 0o644)
            .file("edited.conf", "b = 1\n", 0o644)
            .file("moded.conf", "c = 1\n", 0o644)
            .file("grown.conf", "d = 1\n", 0o644)
            .file("linked.conf", "e = 1\n", 0o644)
            .file("gone/missing.conf", "f = 1\n", 0o644)
            .file("owned/right.conf", "g = 1\n", 0o600)
            .owner("owned/right.conf", uid, gid)
            .file("owned/wrong.conf", "h = 1\n", 0o600)
            .owner("owned/wrong.conf", uid + 1, gid)
            .document("doc.json", DocumentFormat::Json, "{\"k\": 1}\n", 0o644)
            .document("edited.json", DocumentFormat::Json, "{\"k\": 1}\n", 0o644);
        let lexicon = FilesLexicon::new("e", Some(root.path().to_path_buf()), declaration);
        lexicon.apply().unwrap();
        let at = |p: &str| root.path().join(p);
        std::fs::write(at("edited.conf"), "b = 2\n").unwrap();
        std::fs::set_permissions(at("moded.conf"), std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::write(at("grown.conf"), "d = 1\nmore\n").unwrap();
        std::fs::remove_file(at("linked.conf")).unwrap();
        std::os::unix::fs::symlink("same.conf", at("linked.conf")).unwrap();
        std::fs::remove_file(at("gone/missing.conf")).unwrap();
        std::fs::write(at("edited.json"), "{\"k\": 2, \"extra\": true}\n").unwrap();

        for (fast, slow) in both(&lexicon) {
            assert_eq!(fast, slow);
            let drifting: Vec<&str> =
                fast.entities.iter().filter(|e| !e.is_clean()).map(|e| e.entity.as_str()).collect();
            assert_eq!(
                drifting,
                ["edited.conf", "edited.json", "grown.conf", "linked.conf", "moded.conf", "owned/wrong.conf"]
            );
            let all: Vec<&str> = fast.entities.iter().map(|e| e.entity.as_str()).collect();
            assert_eq!(all.len(), 9, "every present file has its verdict, the clean ones too: {all:?}");
        }
        // Declared out of order, one entity twice (by hand; a declaration lists each file once).
        let mut declared = lexicon.declared().unwrap();
        declared.reverse();
        declared.push(declared[3].clone());
        for (fast, slow) in both_of(&lexicon, &declared) {
            assert_eq!(fast, slow);
            assert_eq!(fast.entities.len(), 9);
        }
    }

    #[test]
    fn the_classified_shortcut_reads_nothing_without_a_root_or_declaration() {
        let lexicon = FilesLexicon::new("e", None, FilesDeclaration::new().file("a", "x", 0o644));
        for (fast, slow) in both(&lexicon) {
            assert_eq!(fast, slow);
            assert!(fast.entities.is_empty());
        }
        assert!(lexicon.observe_deep_classified(&[]).unwrap().unwrap().entities.is_empty());
    }
}

//! The files lexicon as a part of an env declaration: the lexicon API's registries (declared
//! envs, registered lexicons) exercised with a real lexicon.

use chant_lexicon::{DeclarationError, DeclaredEnv, EnvDeclaration, declaration, declared_envs, inventory};

use crate::FilesDeclaration;

fn one() -> EnvDeclaration {
    EnvDeclaration::new().with(FilesDeclaration::new().file("a", "x", 0o644))
}

fn empty() -> EnvDeclaration {
    EnvDeclaration::new()
}

inventory::submit! { DeclaredEnv::new("unit-one", one) }
inventory::submit! { DeclaredEnv::new("unit-twice", one) }
inventory::submit! { DeclaredEnv::new("unit-twice", empty) }

#[test]
fn lookup_by_env() {
    assert_eq!(declaration("unit-one").unwrap(), Some(one()));
    assert_eq!(declaration("unit-none").unwrap(), None);
    assert_eq!(
        declaration("unit-twice").unwrap_err(),
        DeclarationError::Duplicate { env: "unit-twice".into(), count: 2 }
    );
    let envs = declared_envs();
    assert!(envs.contains(&"unit-one") && envs.iter().filter(|e| **e == "unit-twice").count() == 1);
}

#[test]
fn parts_are_typed_one_per_lexicon() {
    let declared = one().with(FilesDeclaration::new().file("b", "y", 0o600));
    assert_eq!(declared.lexicons().collect::<Vec<_>>(), ["files"]);
    let files = declared.get::<FilesDeclaration>().unwrap();
    assert_eq!(files.files().keys().collect::<Vec<_>>(), ["b"], "a second part of one lexicon replaces the first");
    assert_ne!(declared, one());
    assert_eq!(declared.clone(), declared);
    assert!(format!("{declared:?}").contains("files"));
    assert!(empty().is_empty() && empty().get::<FilesDeclaration>().is_none());
}

#[test]
fn the_files_lexicon_registers_itself_with_its_key() {
    let names: Vec<&str> = chant_lexicon::registry::registrations().unwrap().iter().map(|r| r.lexicon).collect();
    assert!(names.contains(&"files"), "{names:?}");
    let keys: Vec<&str> = chant_lexicon::registry::binding_keys().unwrap().iter().map(|(_, k)| k.name).collect();
    assert!(keys.contains(&"files_root"), "{keys:?}");
    let files = chant_lexicon::registry::registration_of::<FilesDeclaration>().unwrap().unwrap();
    assert!(files.type_name().ends_with("FilesDeclaration"), "{}", files.type_name());
    assert!(chant_lexicon::registry::registration_of::<String>().unwrap().is_none());
}

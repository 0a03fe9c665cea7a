//! The box example's ops are registered, in resource mode, and belong to the `box` member.

#[test]
fn the_box_ops_are_registered_as_the_seed_declares_them() {
    let names: Vec<&str> =
        chant::registry::ops().iter().filter(|o| o.krate == "chant-example-box").map(|o| o.name).collect();
    // Linking the library is what registers its ops in this test binary.
    use chant_example_box as _;
    assert_eq!(names, ["check-listed", "converge", "restart-app", "restart-service", "services"]);
    let converge: serde_json::Value = serde_json::from_str(chant::registry::find("converge").unwrap().json).unwrap();
    assert_eq!(converge["member"], "box");
    assert_eq!(converge["converge"]["observe"]["kind"], "sprite_services_observe");
    assert_eq!(converge["converge"]["observe"]["args"]["box"], true);
    assert_eq!(converge["labels"]["Dial"], "apply");
    let restart = chant::registry::find("restart-service").unwrap();
    assert_eq!(restart.class, chant::model::ClassKind::Mutating);
    // The lists in place of the box block: inline names, and a file; op.json carries the key
    // given and no `box`.
    let listed: serde_json::Value = serde_json::from_str(chant::registry::find("check-listed").unwrap().json).unwrap();
    assert_eq!(listed["phases"][0]["steps"][0]["args"], serde_json::json!({"services": ["app", "worker"]}));
    let from_file: serde_json::Value =
        serde_json::from_str(chant::registry::find("restart-app").unwrap().json).unwrap();
    assert_eq!(
        from_file["phases"][0]["steps"][0]["args"],
        serde_json::json!({"name": "app", "services_file": "examples/box/services.json"})
    );
}

#[test]
fn the_examples_services_file_is_a_valid_box_block_naming_the_block_s_services() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap();
    let text = std::fs::read_to_string(root.join("examples/box/services.json")).unwrap();
    let file = chant::lexicon::sprite::BoxDeclaration::from_value(&serde_json::from_str(&text).unwrap()).unwrap();
    let block = chant::lexicon::sprite::BoxDeclaration::read(&root, Some("box")).unwrap();
    for s in file.services() {
        assert_eq!(
            Some(s),
            block.get(&s.name).map(|b| chant::lexicon::sprite::BoxService { duration: None, ..b.clone() }).as_ref()
        );
    }
}

#[test]
fn the_root_box_block_validates_and_resolves_from_any_clone() {
    use chant::lexicon::sprite::{BoxDeclaration, PROJECT_DIR_VAR};
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap();
    let decl = BoxDeclaration::read(&root, Some("box")).unwrap();
    let names: Vec<&str> = decl.services().iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["app", "worker", "site"]);
    assert_eq!(decl.get("worker").unwrap().needs, ["app"]);
    assert!(decl.get("site").unwrap().optional);
    // Only the project root is needed: every script named by a cmd is committed in the example.
    let shown = root.display().to_string();
    let lookup = |k: &str| (k == PROJECT_DIR_VAR).then(|| shown.clone());
    for s in decl.services() {
        let argv = s.argv(&lookup).unwrap();
        assert_eq!(argv[0], "python3", "{}", s.name);
        assert!(std::path::Path::new(&argv[1]).is_file(), "{}: {} is not committed", s.name, argv[1]);
        assert!(s.health.as_deref().unwrap().starts_with("http://127.0.0.1:"), "{}", s.name);
    }
}

//! The box example's ops are registered, in resource mode, and belong to the `box` member.

#[test]
fn the_box_ops_are_registered_as_the_seed_declares_them() {
    let names: Vec<&str> =
        chant::registry::ops().iter().filter(|o| o.krate == "chant-example-box").map(|o| o.name).collect();
    // Linking the library is what registers its ops in this test binary.
    use chant_example_box as _;
    assert_eq!(names, ["converge", "restart-service", "services"]);
    let converge: serde_json::Value = serde_json::from_str(chant::registry::find("converge").unwrap().json).unwrap();
    assert_eq!(converge["member"], "box");
    assert_eq!(converge["converge"]["observe"]["kind"], "sprite_services_observe");
    assert_eq!(converge["converge"]["observe"]["args"]["box"], true);
    assert_eq!(converge["labels"]["Dial"], "apply");
    let restart = chant::registry::find("restart-service").unwrap();
    assert_eq!(restart.class, chant::model::ClassKind::Mutating);
}

//! `ci cron`, `ci systemd` and `ci cronjob` through the project binary: the generated text is
//! parsed back (each crontab line's cron is the op's own, each timer's `OnCalendar=` fires when
//! the cron does, by `systemd-analyze calendar`), the units pass `systemd-analyze verify` where it
//! exists, and the generated command itself is run: it ticks the op. The unscheduled ops are left
//! out and the output says so; a CronJob has no image unless one is given.

use super::support::{PROJECT, Sandbox, config_with_roots};

/// `night-converge` fires at 03:00 UTC; a clock just after it makes the op due.
const AT_THREE: (&str, &str) = ("CHANT_NOW", "2026-03-02T03:00:05.000Z");

/// The e2e project's scheduled ConvergeOps: `mark-sched` every ten minutes, `night-converge` at
/// 03:00; every other ConvergeOp (`site-converge`, `blind-converge`, ...) declares no schedule.
const SCHEDULED: [(&str, &str); 2] = [("mark-sched", "*/10 * * * *"), ("night-converge", "0 3 * * *")];

/// The comment line naming the left-out ops: the unscheduled ones, never a scheduled one.
fn assert_left_out(text: &str) {
    let line = text.lines().find(|l| l.contains("left out: ")).unwrap_or_else(|| panic!("no left-out line:\n{text}"));
    assert!(line.contains("site-converge") && line.contains("blind-converge"), "{line}");
    assert!(line.contains("declare(s) no schedule, and chant invents no cadence"), "{line}");
    for (op, _) in SCHEDULED {
        assert!(!line.contains(&format!(" {op},")) && !line.contains(&format!(" {op} ")), "{line}");
    }
}

fn systemd_analyze() -> Option<String> {
    std::process::Command::new("systemd-analyze")
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|_| "systemd-analyze".to_owned())
}

#[test]
fn ci_cron_lines_are_the_ops_own_schedules_and_run_the_op() {
    let sandbox = Sandbox::new(&config_with_roots(&["site", "night"]));
    let out = sandbox.project(&["ci", "cron"], &[]);
    out.code(0);
    assert_left_out(&out.stdout);
    assert!(out.stderr.contains("note: left out: "), "{}", out.all());
    let lines: Vec<&str> = out.stdout.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()).collect();
    assert_eq!(lines[0], "CRON_TZ=UTC", "{}", out.all());
    assert_eq!(lines.len(), 1 + SCHEDULED.len(), "one line per scheduled op:\n{}", out.all());
    // Parsed back: five fields that parse to the op's own cron, then the command naming the op.
    let mut command = "";
    for (line, (op, cron)) in lines[1..].iter().zip(SCHEDULED) {
        let fields: Vec<&str> = line.splitn(6, ' ').collect();
        let parsed = chant::model::cron::parse_cron(&fields[..5].join(" ")).unwrap();
        let want = chant::model::cron::parse_cron(cron).unwrap();
        assert_eq!((parsed.minutes, parsed.hours), (want.minutes, want.hours), "{line}");
        assert!(fields[5].ends_with(&format!(" operator --once --op {op}")), "{line}");
        if op == "night-converge" {
            command = fields[5];
        }
    }
    assert!(command.ends_with(" operator --once --op night-converge"), "{command}");
    assert!(command.contains(&std::fs::canonicalize(PROJECT).unwrap().display().to_string()), "{command}");

    // The line's command, as cron would run it (sh -c), ticks the op when it is due.
    let ran = sandbox.run_in("sh", &sandbox.root().join("home"), &["-c", command], &[AT_THREE]);
    ran.code(0);
    assert!(ran.stdout.contains("operator: night-converge@night ticked=1"), "{}", ran.all());
    assert!(!ran.all().contains("site-converge"), "only the op of the line ticks: {}", ran.all());

    // One op; an unscheduled op alone is refused, a typo gets a did-you-mean.
    sandbox.project(&["ci", "cron", "--op", "night-converge"], &[]).code(0);
    let out = sandbox.project(&["ci", "cron", "--op", "site-converge"], &[]);
    assert!(
        out.code(2).stderr.contains("no ConvergeOp to schedule: site-converge declare(s) no schedule"),
        "{}",
        out.all()
    );
    let out = sandbox.project(&["ci", "cron", "--op", "nigth-converge"], &[]);
    assert!(out.code(2).stderr.contains("did you mean `night-converge`?"), "{}", out.all());
    let out = sandbox.project(&["ci", "cron", "--workdir", "relative/dir"], &[]);
    assert!(out.code(2).stderr.contains("--workdir relative/dir: give an absolute path"), "{}", out.all());
    let out = sandbox.project(&["operator", "--once", "--op", "nigth-converge"], &[]);
    assert!(out.code(2).stderr.contains("did you mean `night-converge`?"), "{}", out.all());
}

#[test]
fn ci_systemd_units_verify_fire_on_the_cron_and_run_the_op() {
    let sandbox = Sandbox::new(&config_with_roots(&["site", "night"]));
    let dir = sandbox.root().join("units");
    let out = sandbox.project(&["ci", "systemd", "--out", dir.to_str().unwrap()], &[]);
    out.code(0);
    assert!(out.stderr.contains("note: left out: "), "{}", out.all());
    assert_left_out(&out.stderr);
    let mut written: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    written.sort();
    assert_eq!(
        written,
        [
            "chant-mark-sched.service",
            "chant-mark-sched.timer",
            "chant-night-converge.service",
            "chant-night-converge.timer"
        ]
    );
    let service = std::fs::read_to_string(dir.join("chant-night-converge.service")).unwrap();
    let timer = std::fs::read_to_string(dir.join("chant-night-converge.timer")).unwrap();
    assert!(timer.contains("\nOnCalendar=*-*-* 03:00:00 UTC\n"), "{timer}");
    assert!(timer.contains("\nUnit=chant-night-converge.service\n"), "{timer}");
    let exec = service.lines().find_map(|l| l.strip_prefix("ExecStart=")).unwrap();
    assert!(exec.ends_with(" operator --once --op night-converge"), "{exec}");

    // The service's command ticks the op.
    let ran = sandbox.run_in("sh", &sandbox.dir, &["-c", exec], &[AT_THREE]);
    assert!(ran.code(0).stdout.contains("operator: night-converge@night ticked=1"), "{}", ran.all());

    // The operator unit.
    let op_dir = sandbox.root().join("operator-unit");
    sandbox.project(&["ci", "systemd", "--operator", "--out", op_dir.to_str().unwrap()], &[]).code(0);
    let operator = std::fs::read_to_string(op_dir.join("chant-operator.service")).unwrap();
    assert!(operator.lines().any(|l| l.starts_with("ExecStart=") && l.ends_with(" operator")), "{operator}");
    assert!(operator.contains("\nRestart=on-failure\n"), "{operator}");

    let Some(analyze) = systemd_analyze() else {
        eprintln!("skipped: systemd-analyze is not installed, so the units were not verified");
        return;
    };
    for files in [
        vec![dir.join("chant-night-converge.timer"), dir.join("chant-night-converge.service")],
        vec![op_dir.join("chant-operator.service")],
    ] {
        let v = std::process::Command::new(&analyze).arg("verify").args(&files).output().unwrap();
        let stderr = String::from_utf8_lossy(&v.stderr);
        assert!(v.status.success() && stderr.trim().is_empty(), "systemd-analyze verify {files:?}: {stderr}");
    }
    // systemd's next elapses of the timer's calendar are croner's fire times.
    let calendar = timer.lines().find_map(|l| l.strip_prefix("OnCalendar=")).unwrap();
    let c = std::process::Command::new(&analyze)
        .args(["calendar", "--iterations=3", "--base-time=2026-03-01 12:00:00 UTC", calendar])
        .env("TZ", "UTC")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&c.stdout);
    assert!(c.status.success(), "{said}{}", String::from_utf8_lossy(&c.stderr));
    for day in ["2026-03-02 03:00:00", "2026-03-03 03:00:00", "2026-03-04 03:00:00"] {
        assert!(said.contains(day), "{day} in\n{said}");
    }
}

#[test]
fn ci_cronjob_takes_its_image_from_the_flag_or_chant_toml_and_never_invents_one() {
    let sandbox = Sandbox::new(&config_with_roots(&["site", "night"]));
    let out = sandbox.project(&["ci", "cronjob"], &[]);
    out.code(2);
    assert!(out.stderr.contains("--image") && out.stderr.contains("under `[ci]` in chant.toml"), "{}", out.all());
    assert!(!out.stdout.contains("image:"), "{}", out.all());

    let yaml = |text: &str| -> Vec<serde_norway::Value> {
        text.split("\n---\n").map(|d| serde_norway::from_str(d).unwrap_or_else(|e| panic!("{e}\n{text}"))).collect()
    };
    let out = sandbox.project(&["ci", "cronjob", "--image", "registry.test/e2e:1"], &[]);
    let docs = yaml(&out.code(0).stdout);
    assert_eq!(docs.len(), SCHEDULED.len(), "one CronJob per scheduled op, none for the others\n{}", out.stdout);
    assert_left_out(&out.stdout);
    let k = &docs[1];
    assert_eq!(k["metadata"]["name"].as_str(), Some("chant-night-converge"));
    assert_eq!((k["spec"]["schedule"].as_str(), k["spec"]["timeZone"].as_str()), (Some("0 3 * * *"), Some("Etc/UTC")));
    let container = &k["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container["image"].as_str(), Some("registry.test/e2e:1"));

    let mut config = config_with_roots(&["site", "night"]);
    config.push_str("\n[ci]\nimage = \"registry.test/from-toml:2\"\n");
    sandbox.write_config(&config);
    let out = sandbox.project(&["ci", "cronjob"], &[]);
    let docs = yaml(&out.code(0).stdout);
    let container = &docs[0]["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container["image"].as_str(), Some("registry.test/from-toml:2"));

    // The workflows leave the unscheduled ops out too: no invented cron, and the round is
    // narrowed to the scheduled op.
    let out = sandbox.project(&["ci", "workflow", "--github"], &[]);
    let gh: serde_norway::Value = serde_norway::from_str(&out.code(0).stdout).unwrap();
    let crons: Vec<&str> =
        gh["on"]["schedule"].as_sequence().unwrap().iter().filter_map(|c| c["cron"].as_str()).collect();
    assert_eq!(crons, ["*/10 * * * *", "0 3 * * *"]);
    let runs: Vec<&str> =
        gh["jobs"]["operator"]["steps"].as_sequence().unwrap().iter().filter_map(|s| s["run"].as_str()).collect();
    let round = "./target/release/e2e-project operator --once --op mark-sched --op night-converge";
    assert!(runs.contains(&round), "{runs:?}");
}

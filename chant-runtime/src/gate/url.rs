//! Where approval happens: the pull or merge request of the CI job a run is in, read from the
//! job's variables, as the original's `resolveApprovalUrl` does. A GitHub pull-request job
//! (`GITHUB_REF_NAME` `<n>/merge` or `<n>/head`, `GITHUB_REPOSITORY`, `GITHUB_SERVER_URL` or
//! `https://github.com`) gives `<server>/<repo>/pull/<n>`; a GitLab merge-request job
//! (`CI_MERGE_REQUEST_PROJECT_URL`, `CI_MERGE_REQUEST_IID`) gives
//! `<project url>/-/merge_requests/<iid>`. Anything else gives none, never a synthesised link.

/// The approval link of the job whose variables `var` reads, if it is a PR or MR job.
pub fn approval_url(var: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    let set = |name: &str| var(name).filter(|v| !v.trim().is_empty());
    if let (Some(r), Some(repo)) = (set("GITHUB_REF_NAME"), set("GITHUB_REPOSITORY"))
        && let Some(n) = r.strip_suffix("/merge").or_else(|| r.strip_suffix("/head"))
        && !n.is_empty()
        && n.bytes().all(|b| b.is_ascii_digit())
    {
        let server = set("GITHUB_SERVER_URL").unwrap_or_else(|| "https://github.com".to_owned());
        return Some(format!("{}/{repo}/pull/{n}", server.trim_end_matches('/')));
    }
    if let (Some(project), Some(iid)) = (set("CI_MERGE_REQUEST_PROJECT_URL"), set("CI_MERGE_REQUEST_IID"))
        && iid.bytes().all(|b| b.is_ascii_digit())
    {
        return Some(format!("{}/-/merge_requests/{iid}", project.trim_end_matches('/')));
    }
    None
}

/// Whether `url` is an absolute `http://` or `https://` URL with a host.
pub fn is_approval_url(url: &str) -> bool {
    url.strip_prefix("https://").or_else(|| url.strip_prefix("http://")).is_some_and(|rest| {
        let host = rest.split(['/', '?', '#']).next().unwrap_or("");
        !host.is_empty() && !rest.contains(char::is_whitespace)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(vars: &[(&str, &str)]) -> Option<String> {
        approval_url(&|name| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| (*v).to_owned()))
    }

    #[test]
    fn pull_and_merge_request_jobs_give_their_link_and_nothing_else_does() {
        let gh = [("GITHUB_REF_NAME", "123/merge"), ("GITHUB_REPOSITORY", "org/repo")];
        assert_eq!(url(&gh).as_deref(), Some("https://github.com/org/repo/pull/123"));
        let ghe = [
            ("GITHUB_REF_NAME", "7/head"),
            ("GITHUB_REPOSITORY", "o/r"),
            ("GITHUB_SERVER_URL", "https://ghe.example.org/"),
        ];
        assert_eq!(url(&ghe).as_deref(), Some("https://ghe.example.org/o/r/pull/7"));
        let gl = [("CI_MERGE_REQUEST_PROJECT_URL", "https://gitlab.example.org/g/p/"), ("CI_MERGE_REQUEST_IID", "42")];
        assert_eq!(url(&gl).as_deref(), Some("https://gitlab.example.org/g/p/-/merge_requests/42"));
        let none: [&[(&str, &str)]; 6] = [
            &[],
            &[("GITHUB_REF_NAME", "main"), ("GITHUB_REPOSITORY", "org/repo")],
            &[("GITHUB_REF_NAME", "feature/merge"), ("GITHUB_REPOSITORY", "org/repo")],
            &[("GITHUB_REF_NAME", "12/merge")],
            &[("CI_MERGE_REQUEST_PROJECT_URL", "https://gitlab.example.org/g/p")],
            &[("CI_COMMIT_REF_NAME", "main"), ("GITHUB_ACTIONS", "true")],
        ];
        for vars in none {
            assert_eq!(url(vars), None, "{vars:?}");
        }
    }

    #[test]
    fn approval_urls_are_absolute_http() {
        assert!(is_approval_url("https://github.com/o/r/pull/1"));
        assert!(is_approval_url("http://localhost:8080/x"));
        for bad in ["ftp://x", "github.com/o/r", "https://", "https:///x", "https://a b"] {
            assert!(!is_approval_url(bad), "{bad}");
        }
    }
}

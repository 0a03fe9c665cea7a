//! What file system a benchmark's temporary directory is on, said in words for its output.
//!
//! On this project's CI machines the root file system is ext4 *without a journal*. There, the
//! kernel's inode allocator (`find_inode_bit`) skips, one at a time, every free inode of the group
//! that was freed within the last minute or so (longer while its inode table block is dirty),
//! looking up each one's inode table block to read its deletion time (`recently_deleted`): a new
//! file costs more the more files were deleted near it lately, by this process (a ref update
//! renames its lock over the old file, freeing an inode) or by a neighbour's build. chant writes a file per git object and per ref lock,
//! so its figures there measure that scan as much as chant; a benchmark prints this line so that
//! a reader knows which figures they hold, and `TMPDIR=/dev/shm` measures the same work on tmpfs.

use std::path::Path;

/// One line naming the file system `path` is on (type and source, and for ext4 whether it has a
/// journal), from `/proc/self/mountinfo` and `/sys/fs/ext4`; `unknown` where those cannot be read.
pub fn describe(path: &Path) -> String {
    let path = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let Ok(mountinfo) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return format!("{}: file system unknown", path.display());
    };
    // The mount whose mount point is the longest prefix of the path holds it.
    let mount =
        mountinfo.lines().filter_map(parse).filter(|m| path.starts_with(&m.point)).max_by_key(|m| m.point.len());
    let Some(mount) = mount else { return format!("{}: file system unknown", path.display()) };
    let mut line = format!("{} is on {} ({} at {})", path.display(), mount.fstype, mount.source, mount.point);
    if mount.fstype == "ext4" {
        let device = mount.source.rsplit('/').next().unwrap_or_default();
        match std::fs::read_to_string(format!("/sys/fs/ext4/{device}/journal_task")) {
            Ok(task) if task.trim() == "<none>" => line.push_str(
                ", without a journal: each new file's inode allocation skips the group's recently \
                 freed inodes one by one, so creating files costs more after deletions \
                 (TMPDIR=/dev/shm measures on tmpfs)",
            ),
            Ok(_) => line.push_str(", with a journal"),
            Err(_) => {}
        }
    }
    line
}

struct Mount {
    point: String,
    fstype: String,
    source: String,
}

/// One line of `/proc/self/mountinfo`: `id parent major:minor root point options [optional...] -
/// fstype source superoptions` (proc(5)); `\040`-style escapes in the mount point are decoded.
fn parse(line: &str) -> Option<Mount> {
    let (left, right) = line.split_once(" - ")?;
    let point = unescape(left.split(' ').nth(4)?);
    let mut right = right.split(' ');
    let fstype = right.next()?.to_owned();
    let source = right.next()?.to_owned();
    Some(Mount { point, fstype, source })
}

fn unescape(field: &str) -> String {
    let mut out = String::new();
    let mut chars = field.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let digits: String = chars.by_ref().take(3).collect();
        match u8::from_str_radix(&digits, 8) {
            Ok(byte) => out.push(char::from(byte)),
            Err(_) => {
                out.push('\\');
                out.push_str(&digits);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mountinfo_line_gives_its_point_type_and_source() {
        let m = parse("36 35 98:0 / /mnt/my\\040disk rw,noatime master:1 - ext4 /dev/vda rw,errors=continue").unwrap();
        assert_eq!((m.point.as_str(), m.fstype.as_str(), m.source.as_str()), ("/mnt/my disk", "ext4", "/dev/vda"));
        assert!(parse("not a mountinfo line").is_none());
    }

    #[test]
    fn the_root_is_on_some_mount() {
        let line = describe(Path::new("/"));
        assert!(line.starts_with("/ is on "), "{line}");
    }
}

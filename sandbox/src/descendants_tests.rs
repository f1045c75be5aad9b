use super::{parse_stat, subtree, ProcStat};

fn proc(pid: i32, ppid: i32) -> ProcStat {
    ProcStat {
        pid,
        state: 'S',
        ppid,
        pgid: pid,
        sid: pid,
    }
}

#[test]
fn stat_fields_are_read_after_the_last_parenthesis() {
    let stat = parse_stat("4242 (a) b (c)) T 17 4242 4240 0 -1 4194560 0 0").unwrap();
    assert_eq!(
        stat,
        ProcStat {
            pid: 4242,
            state: 'T',
            ppid: 17,
            pgid: 4242,
            sid: 4240,
        }
    );
    assert_eq!(parse_stat("garbage"), None);
    assert_eq!(parse_stat("12 (x) S"), None);
}

#[test]
fn subtree_holds_roots_and_every_descendant_only() {
    let procs = [
        proc(1, 0),
        proc(10, 1),
        proc(11, 10),
        proc(12, 11),
        proc(20, 1),
    ];
    let tree: Vec<i32> = subtree(&procs, &[10]).into_iter().collect();
    assert_eq!(tree, vec![10, 11, 12]);
    let tree: Vec<i32> = subtree(&procs, &[12, 20]).into_iter().collect();
    assert_eq!(tree, vec![12, 20]);
}

#[test]
fn our_own_stat_parses() {
    let text = std::fs::read_to_string("/proc/self/stat").unwrap();
    let stat = parse_stat(&text).unwrap();
    assert_eq!(stat.pid, std::process::id() as i32);
}

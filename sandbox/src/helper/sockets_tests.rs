use super::bound_paths;
use std::path::PathBuf;

#[test]
fn only_pathname_sockets_are_listed() {
    let table = "Num       RefCount Protocol Flags    Type St Inode Path\n\
        0000000000000000: 00000002 00000000 00010000 0001 01 20936 /run/docker.sock\n\
        0000000000000000: 00000002 00000000 00010000 0001 01 20937 @/tmp/.X11-unix/X0\n\
        0000000000000000: 00000003 00000000 00000000 0001 03 20938\n\
        0000000000000000: 00000002 00000000 00010000 0001 01 20939 /run/user/1000/my bus\n";
    let paths: Vec<PathBuf> = bound_paths(table).into_iter().collect();
    assert_eq!(
        paths,
        vec![
            PathBuf::from("/run/docker.sock"),
            PathBuf::from("/run/user/1000/my bus")
        ]
    );
}

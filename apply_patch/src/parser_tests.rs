use super::*;
use pretty_assertions::assert_eq;

fn chunk(context: Option<&str>, lines: &[&str], eof: bool, line: usize) -> Chunk {
    let lines = lines
        .iter()
        .map(|text| {
            let kind = match &text[..1] {
                "+" => LineKind::Add,
                "-" => LineKind::Remove,
                _ => LineKind::Context,
            };
            (kind, text[1..].to_string())
        })
        .collect();
    Chunk {
        context: context.map(str::to_string),
        lines,
        end_of_file: eof,
        line,
    }
}

#[test]
fn parses_every_hunk_kind() {
    let patch = "*** Begin Patch\n\
                 *** Add File: new.txt\n+a\n+b\n\
                 *** Delete File: old.txt\n\
                 *** Update File: src/lib.rs\n*** Move to: src/main.rs\n\
                 @@ fn main()\n ctx\n-old\n+new\n\
                 @@\n+tail\n*** End of File\n\
                 *** End Patch";
    assert_eq!(
        parse_patch(patch),
        Ok(vec![
            Hunk::Add {
                path: "new.txt".into(),
                contents: "a\nb\n".into()
            },
            Hunk::Delete {
                path: "old.txt".into()
            },
            Hunk::Update {
                path: "src/lib.rs".into(),
                move_to: Some("src/main.rs".into()),
                chunks: vec![
                    chunk(Some("fn main()"), &[" ctx", "-old", "+new"], false, 8),
                    chunk(None, &["+tail"], true, 12),
                ],
                line: 6,
            },
        ])
    );
}

#[test]
fn errors_carry_line_numbers() {
    let cases: &[(&str, ParseError)] = &[
        (
            "*** Begin Patch\n*** Add File: a\n+x\nbogus\n*** End Patch",
            ParseError::Hunk {
                message: "'bogus' is not a valid hunk header. Valid hunk headers: \
                          '*** Add File: {path}', '*** Delete File: {path}', \
                          '*** Update File: {path}'"
                    .into(),
                line: 4,
            },
        ),
        (
            "*** Begin Patch\n*** Update File: a\n@@\n-x\n@@\n*** End Patch",
            ParseError::Hunk {
                message: "Update hunk does not contain any lines".into(),
                line: 6,
            },
        ),
        (
            "<<EOF\n*** Begin Patch\n*** Add File: a\n+x\nEOF",
            ParseError::Patch("The first line of the patch must be '*** Begin Patch'".into()),
        ),
    ];
    for (patch, expected) in cases {
        assert_eq!(parse_patch(patch).as_ref(), Err(expected), "{patch}");
    }
}

#[test]
fn heredoc_variants_are_unwrapped() {
    for opener in ["<<EOF", "<<'EOF'", "<<\"EOF\""] {
        let patch = format!("{opener}\n*** Begin Patch\n*** Delete File: a\n*** End Patch\nEOF\n");
        assert_eq!(
            parse_patch(&patch),
            Ok(vec![Hunk::Delete { path: "a".into() }]),
            "{opener}"
        );
    }
}

#[test]
fn add_file_stops_at_first_line_without_plus() {
    let patch = "*** Begin Patch\n*** Add File: a\n+1\n*** Add File: b\n+2\n*** End Patch";
    let hunks = parse_patch(patch).expect("parses");
    assert_eq!(hunks.len(), 2);
    assert_eq!(
        hunks[1],
        Hunk::Add {
            path: "b".into(),
            contents: "2\n".into()
        }
    );
}

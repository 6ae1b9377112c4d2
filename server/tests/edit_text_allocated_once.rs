//! A keystroke in a large document allocates its new text once: the
//! edited text is written straight into the snapshot analyses share, not
//! joined in a `String` first and copied (two blocks of the file's size
//! per keystroke, in the allocator's way for the rest of the edit). Large
//! blocks are counted by the server's allocator wrapped in a counter; this
//! file holds one test so that nothing else allocates meanwhile.

use relay_allocator::counting::{large_blocks, Counting, LARGE};
use relay_server::lsp::text::{Document, Encoding};
use tower_lsp_server::ls_types::{Position, Range, TextDocumentContentChangeEvent};

/// The server's allocator, counting the large blocks it hands out.
#[global_allocator]
static ALLOCATOR: Counting = Counting;

#[test]
fn a_keystroke_in_a_large_document_allocates_one_text() {
    let text = relay_test_support::generate::resnet_module_of_size(4 * LARGE);
    let lines = text.split('\n').count() as u32;
    let mut document = Document::new(&text, 1);
    let before = document.text().to_string();
    const EDITS: usize = 10;
    let counted = large_blocks();
    for i in 0..EDITS {
        // Lines spread over the file, a space typed and deleted again.
        let line = (i as u32 * 7919) % lines;
        let at = Position::new(line, 0);
        let change = TextDocumentContentChangeEvent {
            range: Some(Range::new(at, at)),
            range_length: None,
            text: " ".into(),
        };
        document.apply_change(&change, Encoding::Utf16);
        let undo = TextDocumentContentChangeEvent {
            range: Some(Range::new(at, Position::new(line, 1))),
            range_length: None,
            text: String::new(),
        };
        document.apply_change(&undo, Encoding::Utf16);
    }
    let per_edit = (large_blocks() - counted) as f64 / (2 * EDITS) as f64;
    assert_eq!(
        document.text().as_ref(),
        before,
        "typing and deleting a space leaves the text as it was"
    );
    // The text (4 MiB) is the only large block: line starts are 4 bytes a
    // line, under a MiB for this file.
    assert_eq!(
        per_edit,
        1.0,
        "large blocks (>= {LARGE} bytes) allocated per edit of a {} byte text",
        text.len()
    );
}

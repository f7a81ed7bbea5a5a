// What the attention kernels share (prepended to each one's source): the (row, head) an
// invocation owns and the example around it, read from the token rows (`rows`, which each kernel
// binds; the ROW_* places are generated). Row r is position `position` of its example, which
// starts at row r - position; the example's head `head` keeps its [len, len] probabilities from
// `head_probs`.

struct AttentionRow {
    row: u32,
    head: u32,
    position: u32,
    len: u32,
    start: u32,
    head_probs: u32,
}

fn attention_row(index: u32) -> AttentionRow {
    let r = index / args.heads;
    let h = index % args.heads;
    let position = rows[ROW_FIELDS * r + ROW_POSITION];
    let len = rows[ROW_FIELDS * r + ROW_LENGTH];
    let head_probs = rows[ROW_FIELDS * r + ROW_PROBS] + h * len * len;
    return AttentionRow(r, h, position, len, r - position, head_probs);
}

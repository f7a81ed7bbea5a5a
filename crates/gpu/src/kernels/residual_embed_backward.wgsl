// The embeddings' gradients from the residual stream's gradient dx at its start: every row adds
// dx[r] into its token's row of wte and its position's row of wpe. One invocation per value of
// wte (vocab x width) and of wpe (context x width), each adding the rows that use it in row
// order onto what the gradient holds, as the CPU reference adds them (the same sums, bit for
// bit, and no two invocations write one value, so no atomics).

@group(0) @binding(1) var<storage, read> rows: array<u32>;
@group(0) @binding(2) var<storage, read> dx: array<f32>;
@group(0) @binding(3) var<storage, read_write> grads: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let entry = id.x / args.width;
    let c = id.x % args.width;
    if entry >= args.vocab + args.context {
        return;
    }
    // An entry below `vocab` is a token's, the others are positions'.
    var field = ROW_TOKEN;
    var wanted = entry;
    var index = args.wte_offset + entry * args.width + c;
    if entry >= args.vocab {
        field = ROW_POSITION;
        wanted = entry - args.vocab;
        index = args.wpe_offset + wanted * args.width + c;
    }
    var sum = grads[index];
    for (var r = 0u; r < args.rows; r = r + 1u) {
        if rows[ROW_FIELDS * r + field] == wanted {
            sum = sum + dx[r * args.width + c];
        }
    }
    grads[index] = sum;
}

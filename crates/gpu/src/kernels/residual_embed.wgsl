// The start of the tiny GPT's residual stream: x[r, c] = wte[token r, c] + wpe[position r, c],
// one invocation per value. `rows` holds ROW_FIELDS u32 per row, at the generated ROW_* places.

@group(0) @binding(1) var<storage, read> rows: array<u32>;
@group(0) @binding(2) var<storage, read> params: array<f32>;
@group(0) @binding(3) var<storage, read_write> x: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if id.x >= args.rows * args.width {
        return;
    }
    let r = id.x / args.width;
    let c = id.x % args.width;
    let token = rows[ROW_FIELDS * r + ROW_TOKEN];
    let position = rows[ROW_FIELDS * r + ROW_POSITION];
    x[id.x] = params[args.wte_offset + token * args.width + c] + params[args.wpe_offset + position * args.width + c];
}

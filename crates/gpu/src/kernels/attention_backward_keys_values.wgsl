// The backward of causal self-attention, second half: one invocation per (row, head), key and
// value position j (see attention_forward.wgsl for the layout). Every later query i >= j of the
// example looked at it: dk_j = sum_i ds_ij q_i and dv_j = sum_i p_ij dy_i, adding i in order
// (as the CPU reference does), written into dqkv's k and v columns.

@group(0) @binding(1) var<storage, read> rows: array<u32>;
@group(0) @binding(2) var<storage, read> qkv: array<f32>;
@group(0) @binding(3) var<storage, read> probs: array<f32>;
@group(0) @binding(4) var<storage, read> dy: array<f32>;
@group(0) @binding(5) var<storage, read> dscores: array<f32>;
@group(0) @binding(6) var<storage, read_write> dqkv: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if id.x >= args.rows * args.heads {
        return;
    }
    let row = attention_row(id.x);
    let r = row.row;
    let h = row.head;
    let j = row.position;
    let start = row.start;
    let d = args.width;
    let hs = args.head_size;
    for (var c = 0u; c < hs; c = c + 1u) {
        var dk = 0.0;
        var dv = 0.0;
        for (var i = j; i < row.len; i = i + 1u) {
            let p = row.head_probs + i * row.len + j;
            dk = dk + dscores[p] * qkv[(start + i) * 3u * d + h * hs + c];
            dv = dv + probs[p] * dy[(start + i) * d + h * hs + c];
        }
        dqkv[r * 3u * d + d + h * hs + c] = dk;
        dqkv[r * 3u * d + 2u * d + h * hs + c] = dv;
    }
}

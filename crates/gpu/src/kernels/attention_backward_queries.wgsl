// The backward of causal self-attention, first half: one invocation per (row, head), query
// position i (see attention_forward.wgsl for the layout). dp_j = dy_i . v_j, the softmax's
// backward ds_j = p_j (dp_j - sum_j' p_j' dp_j') scale, kept in `dscores` at the probabilities'
// places for attention_backward_keys_values.wgsl, and dq_i = sum_j ds_j k_j (j in order), written
// into dqkv's q columns.

@group(0) @binding(1) var<storage, read> rows: array<u32>;
@group(0) @binding(2) var<storage, read> qkv: array<f32>;
@group(0) @binding(3) var<storage, read> probs: array<f32>;
@group(0) @binding(4) var<storage, read> dy: array<f32>;
@group(0) @binding(5) var<storage, read_write> dscores: array<f32>;
@group(0) @binding(6) var<storage, read_write> dqkv: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if id.x >= args.rows * args.heads {
        return;
    }
    let row = attention_row(id.x);
    let r = row.row;
    let h = row.head;
    let i = row.position;
    let start = row.start;
    let d = args.width;
    let hs = args.head_size;
    let p0 = row.head_probs + i * row.len;
    let g0 = r * d + h * hs;
    var weighted = 0.0;
    for (var j = 0u; j <= i; j = j + 1u) {
        let v0 = (start + j) * 3u * d + 2u * d + h * hs;
        var dp = 0.0;
        for (var c = 0u; c < hs; c = c + 1u) {
            dp = dp + dy[g0 + c] * qkv[v0 + c];
        }
        dscores[p0 + j] = dp;
        weighted = weighted + probs[p0 + j] * dp;
    }
    for (var j = 0u; j <= i; j = j + 1u) {
        dscores[p0 + j] = probs[p0 + j] * (dscores[p0 + j] - weighted) * args.scale;
    }
    for (var c = 0u; c < hs; c = c + 1u) {
        var dq = 0.0;
        for (var j = 0u; j <= i; j = j + 1u) {
            dq = dq + dscores[p0 + j] * qkv[(start + j) * 3u * d + d + h * hs + c];
        }
        dqkv[r * 3u * d + h * hs + c] = dq;
    }
}

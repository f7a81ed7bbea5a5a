// Causal self-attention of the tiny GPT, one invocation per (row, head): row r is position i of
// its example (rows: four u32 per row at the generated ROW_* places), which starts at row
// r - i. qkv is c_attn's output, [rows, 3 width]: q, then k, then v, head h owning columns
// h hs .. (h + 1) hs of each. Scores s_j = (q_i . k_j) scale for j <= i, each dot product adding
// its features in order; p = softmax(s) (the maximum subtracted, the exponentials added in order
// of j), kept at the example's probabilities + (h len + i) len + j for the backward; and
// y_i = sum_j p_j v_j, adding j in order, as the CPU reference (sim/gpt/attention.rs) does.

@group(0) @binding(1) var<storage, read> rows: array<u32>;
@group(0) @binding(2) var<storage, read> qkv: array<f32>;
@group(0) @binding(3) var<storage, read_write> probs: array<f32>;
@group(0) @binding(4) var<storage, read_write> y: array<f32>;

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
    let q0 = r * 3u * d + h * hs;
    var top = 0.0;
    for (var j = 0u; j <= i; j = j + 1u) {
        let k0 = (start + j) * 3u * d + d + h * hs;
        var dot = 0.0;
        for (var c = 0u; c < hs; c = c + 1u) {
            dot = dot + qkv[q0 + c] * qkv[k0 + c];
        }
        let s = dot * args.scale;
        if j == 0u || s > top {
            top = s;
        }
        probs[p0 + j] = s;
    }
    var sum = 0.0;
    for (var j = 0u; j <= i; j = j + 1u) {
        let e = exp(probs[p0 + j] - top);
        probs[p0 + j] = e;
        sum = sum + e;
    }
    for (var j = 0u; j <= i; j = j + 1u) {
        probs[p0 + j] = probs[p0 + j] / sum;
    }
    for (var c = 0u; c < hs; c = c + 1u) {
        var out = 0.0;
        for (var j = 0u; j <= i; j = j + 1u) {
            out = out + probs[p0 + j] * qkv[(start + j) * 3u * d + 2u * d + h * hs + c];
        }
        y[r * d + h * hs + c] = out;
    }
}

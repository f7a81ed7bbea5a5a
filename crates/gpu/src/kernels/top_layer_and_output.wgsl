// A training forward's last two dispatches in one: the top hidden layer (z = x W^T + b, then
// a = f(z), as linear_forward.wgsl computes it) and the output layer with softmax,
// cross-entropy, the gradient of the logits and the gradient at the input of the top layer's
// activation (as output_cross_entropy_vec4.wgsl computes them), the same numbers bit for bit.
// For a top layer whose rows are whole vec4s and at most 64 wide, at most four classes, and an
// activation whose output gives its derivative; z, the probabilities and the correctness are
// not written (nothing of a training pass reads them).
//
// A workgroup takes 8 rows: invocation j computes their outputs 4j..4j+4
// (shared/linear_forward_vec4_block.wgsl) into workgroup memory and `a`, then, after one
// barrier, invocations 0..8 take one row each through the output layer. On lavapipe, 64 rows of
// the canonical network: about 130 us against 110 + 70 for the two kernels. One barrier and at
// most one block per invocation: SwiftShader took minutes to compile a loop over more blocks.

@group(0) @binding(1) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> params: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> labels: array<u32>;
@group(0) @binding(4) var<storage, read_write> a: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> row_loss: array<f32>;
@group(0) @binding(6) var<storage, read_write> dlogits: array<f32>;
@group(0) @binding(7) var<storage, read_write> du_below: array<vec4<f32>>;

const TILE_ROWS: u32 = 8u;
// The widest top layer, in vec4s: one block of outputs per invocation (the workgroup size).
const MAX_TOP_VEC4S: u32 = 16u;

// The workgroup's rows of the top layer's activations, each row args.fan_out / 4 vec4s.
var<workgroup> top_rows: array<vec4<f32>, TILE_ROWS * MAX_TOP_VEC4S>;

fn param_at(i: u32) -> f32 {
    return params[i >> 2u][i & 3u];
}

fn output_input(row: u32, k4: u32) -> vec4<f32> {
    return top_rows[row * (args.fan_out / 4u) + k4];
}

fn keep_row(r: u32, row: u32, block: u32, sums: vec4<f32>) {
    let activated = activate4(args.activation, sums);
    let vec4s = args.fan_out / 4u;
    top_rows[r * vec4s + block] = activated;
    if row < args.rows {
        a[row * vec4s + block] = activated;
    }
}

@compute @workgroup_size(16)
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_index) j: u32) {
    let r0 = group.x * TILE_ROWS;
    if j < args.fan_out / 4u {
        // Rows past the edge repeat the last one's loads; they are kept here but not stored.
        let sums = linear_forward_vec4_block(r0, 4u * j);
        keep_row(0u, r0, j, sums.s0);
        keep_row(1u, r0 + 1u, j, sums.s1);
        keep_row(2u, r0 + 2u, j, sums.s2);
        keep_row(3u, r0 + 3u, j, sums.s3);
        keep_row(4u, r0 + 4u, j, sums.s4);
        keep_row(5u, r0 + 5u, j, sums.s5);
        keep_row(6u, r0 + 6u, j, sums.s6);
        keep_row(7u, r0 + 7u, j, sums.s7);
    }
    workgroupBarrier();
    let i = r0 + j;
    if j >= TILE_ROWS || i >= args.rows {
        return;
    }
    let layer = OutputLayer(args.classes, args.fan_out, args.output_weight_offset, args.output_bias_offset);
    let label = labels[args.label_offset + i];
    let outcome = softmax_cross_entropy(output_logits(layer, j), args.classes, label);
    row_loss[args.loss_offset + i] = outcome.loss;
    let dl = logit_gradient(outcome, label, args.gradient_weight);
    store_logit_gradient(layer, i, dl);
    store_output_input_gradient(layer, j, i, dl, args.activation);
}

// The output layer with softmax and cross-entropy, as output_cross_entropy.wgsl computes it, for
// layers whose input rows hold whole vec4s (fan_in and weight_offset multiples of 4) and at most
// four classes (every dataset of the Lab has two or three). One invocation per row keeps the
// row's logits and logit gradients in registers and loads inputs and weights four at a time:
// a software adapter pays for every memory access of each invocation separately, and this
// makes about a quarter as many. Every sum adds in the order of the other kernel's (logits: the
// bias, then k = 0, 1, ...; the input gradient: c = 0, 1, ... from zero), so the two give the
// same numbers bit for bit.

struct OutputParams {
    rows: u32,
    classes: u32,
    fan_in: u32,
    weight_offset: u32,
    bias_offset: u32,
    label_offset: u32,
    gradient_weight: f32,
    write_gradient: u32,
    loss_offset: u32,
    write_input_gradient: u32,
    activation_below: u32,
    pad0: u32,
}

@group(0) @binding(0) var<uniform> dims: OutputParams;
@group(0) @binding(1) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> params: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> labels: array<u32>;
@group(0) @binding(4) var<storage, read_write> probs: array<f32>;
@group(0) @binding(5) var<storage, read_write> row_loss: array<f32>;
@group(0) @binding(6) var<storage, read_write> row_correct: array<f32>;
@group(0) @binding(7) var<storage, read_write> dlogits: array<f32>;
@group(0) @binding(8) var<storage, read_write> du_below: array<vec4<f32>>;

fn param_at(i: u32) -> f32 {
    return params[i >> 2u][i & 3u];
}

// Stores the first `classes` lanes of `values` at `at`, `at + 1`, ...
fn store_classes(at: u32, values: vec4<f32>, gradient: bool) {
    let n = dims.classes;
    if gradient {
        dlogits[at] = values.x;
        if n > 1u { dlogits[at + 1u] = values.y; }
        if n > 2u { dlogits[at + 2u] = values.z; }
        if n > 3u { dlogits[at + 3u] = values.w; }
    } else {
        probs[at] = values.x;
        if n > 1u { probs[at + 1u] = values.y; }
        if n > 2u { probs[at + 2u] = values.z; }
        if n > 3u { probs[at + 3u] = values.w; }
    }
}

@compute @workgroup_size(16)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if i >= dims.rows {
        return;
    }
    let n = dims.classes;
    let vec4s_per_row = dims.fan_in / 4u;
    let xr = i * vec4s_per_row;
    // Classes past the last repeat it: their lanes are computed but never used.
    let last_class = n - 1u;
    let c1 = min(1u, last_class);
    let c2 = min(2u, last_class);
    let c3 = min(3u, last_class);
    let w0 = dims.weight_offset / 4u;
    let w1 = (dims.weight_offset + c1 * dims.fan_in) / 4u;
    let w2 = (dims.weight_offset + c2 * dims.fan_in) / 4u;
    let w3 = (dims.weight_offset + c3 * dims.fan_in) / 4u;
    let b = dims.bias_offset;
    var logits = vec4<f32>(param_at(b), param_at(b + c1), param_at(b + c2), param_at(b + c3));
    for (var k4 = 0u; k4 < vec4s_per_row; k4 = k4 + 1u) {
        let v = x[xr + k4];
        // Column j of `w` holds W[0..4, 4 k4 + j]: the weights of input k = 4 k4 + j.
        let w = transpose(mat4x4<f32>(params[w0 + k4], params[w1 + k4], params[w2 + k4], params[w3 + k4]));
        logits = logits + v.x * w[0];
        logits = logits + v.y * w[1];
        logits = logits + v.z * w[2];
        logits = logits + v.w * w[3];
    }
    var best = 0u;
    var top = logits.x;
    if n > 1u && logits.y > top {
        top = logits.y;
        best = 1u;
    }
    if n > 2u && logits.z > top {
        top = logits.z;
        best = 2u;
    }
    if n > 3u && logits.w > top {
        top = logits.w;
        best = 3u;
    }
    var sum = 0.0;
    sum = sum + exp(logits.x - top);
    sum = select(sum, sum + exp(logits.y - top), n > 1u);
    sum = select(sum, sum + exp(logits.z - top), n > 2u);
    sum = select(sum, sum + exp(logits.w - top), n > 3u);
    let log_sum = top + log(sum);
    let label = labels[dims.label_offset + i];
    let one_hot = vec4<f32>(
        select(0.0, 1.0, label == 0u),
        select(0.0, 1.0, label == 1u),
        select(0.0, 1.0, label == 2u),
        select(0.0, 1.0, label == 3u),
    );
    // The label's logit by selection (a dot product with one_hot would turn an infinite logit
    // of another class into NaN).
    let label_logit = select(select(select(logits.x, logits.y, label == 1u), logits.z, label == 2u), logits.w, label == 3u);
    row_loss[dims.loss_offset + i] = log_sum - label_logit;
    row_correct[i] = select(0.0, 1.0, best == label);
    let probability = vec4<f32>(
        exp(logits.x - log_sum),
        exp(logits.y - log_sum),
        exp(logits.z - log_sum),
        exp(logits.w - log_sum),
    );
    let base = i * n;
    store_classes(base, probability, false);
    if dims.write_gradient != 1u {
        return;
    }
    let dl = dims.gradient_weight * (probability - one_hot);
    store_classes(base, dl, true);
    if dims.write_input_gradient == 1u {
        let f = dims.activation_below;
        for (var k4 = 0u; k4 < vec4s_per_row; k4 = k4 + 1u) {
            // du[i, k] = (sum_c dlogits[i, c] W[c, k]) f'(u[i, k]), c in order from zero.
            // A loop, as in the other kernel: unrolled from a constant zero, a compiler may fold
            // 0 + x into x, which changes the sign of a zero gradient.
            var g = vec4<f32>(0.0);
            for (var c = 0u; c < n; c = c + 1u) {
                g = g + dl[c] * params[w0 + c * vec4s_per_row + k4];
            }
            let v = x[xr + k4];
            du_below[xr + k4] = g * vec4<f32>(
                activation_derivative_at_output(f, v.x),
                activation_derivative_at_output(f, v.y),
                activation_derivative_at_output(f, v.z),
                activation_derivative_at_output(f, v.w),
            );
        }
    }
}

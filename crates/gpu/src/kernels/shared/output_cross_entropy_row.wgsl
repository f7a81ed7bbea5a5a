// One row of an output layer with at most four classes over inputs in whole vec4s, softmax and
// cross-entropy, shared by output_cross_entropy_vec4.wgsl and top_layer_and_output.wgsl. The
// row's logits and logit gradients stay in registers; inputs and weights load four at a time.
// Input k4 of a row comes from output_input(row, k4), which the kernel that includes this
// declares with `params` (a vec4 array), param_at, `dlogits` and `du_below`. Every sum adds in the order of
// output_cross_entropy.wgsl's (logits: the bias, then k = 0, 1, ...; the input gradient:
// c = 0, 1, ... from zero), so the kernels give the same numbers bit for bit.

// Where an output layer's weights and biases are, and its shape.
struct OutputLayer {
    classes: u32,
    fan_in: u32,
    weight_offset: u32,
    bias_offset: u32,
}

struct RowOutcome {
    probability: vec4<f32>,
    loss: f32,
    best: u32,
}

// Index of class c's weight vec4s (classes past the last repeat it: their lanes are computed but
// never used).
fn class_weights(layer: OutputLayer, c: u32) -> u32 {
    return (layer.weight_offset + min(c, layer.classes - 1u) * layer.fan_in) / 4u;
}

fn output_logits(layer: OutputLayer, row: u32) -> vec4<f32> {
    let last_class = layer.classes - 1u;
    let w0 = class_weights(layer, 0u);
    let w1 = class_weights(layer, 1u);
    let w2 = class_weights(layer, 2u);
    let w3 = class_weights(layer, 3u);
    let b = layer.bias_offset;
    var logits = vec4<f32>(
        param_at(b),
        param_at(b + min(1u, last_class)),
        param_at(b + min(2u, last_class)),
        param_at(b + min(3u, last_class)),
    );
    for (var k4 = 0u; k4 < layer.fan_in / 4u; k4 = k4 + 1u) {
        let v = output_input(row, k4);
        // Column j of `w` holds W[0..4, 4 k4 + j]: the weights of input k = 4 k4 + j.
        let w = transpose(mat4x4<f32>(params[w0 + k4], params[w1 + k4], params[w2 + k4], params[w3 + k4]));
        logits = logits + v.x * w[0];
        logits = logits + v.y * w[1];
        logits = logits + v.z * w[2];
        logits = logits + v.w * w[3];
    }
    return logits;
}

fn softmax_cross_entropy(logits: vec4<f32>, n: u32, label: u32) -> RowOutcome {
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
    // The label's logit by selection (a dot product with a one-hot vector would turn an infinite
    // logit of another class into NaN).
    let label_logit = select(select(select(logits.x, logits.y, label == 1u), logits.z, label == 2u), logits.w, label == 3u);
    let probability = vec4<f32>(
        exp(logits.x - log_sum),
        exp(logits.y - log_sum),
        exp(logits.z - log_sum),
        exp(logits.w - log_sum),
    );
    return RowOutcome(probability, log_sum - label_logit, best);
}

// The gradient of the weighted loss at the logits.
fn logit_gradient(outcome: RowOutcome, label: u32, gradient_weight: f32) -> vec4<f32> {
    let one_hot = vec4<f32>(
        select(0.0, 1.0, label == 0u),
        select(0.0, 1.0, label == 1u),
        select(0.0, 1.0, label == 2u),
        select(0.0, 1.0, label == 3u),
    );
    return gradient_weight * (outcome.probability - one_hot);
}

// The first `classes` lanes of a row's logit gradient, into dlogits[row, 0..classes].
fn store_logit_gradient(layer: OutputLayer, row: u32, dl: vec4<f32>) {
    let at = row * layer.classes;
    dlogits[at] = dl.x;
    if layer.classes > 1u { dlogits[at + 1u] = dl.y; }
    if layer.classes > 2u { dlogits[at + 2u] = dl.z; }
    if layer.classes > 3u { dlogits[at + 3u] = dl.w; }
}

// du_below[du_row, k] = (sum_c dl[c] W[c, k]) f'(u[row, k]), f' taken from the input
// output_input(row, k) = f(u).
fn store_output_input_gradient(layer: OutputLayer, row: u32, du_row: u32, dl: vec4<f32>, activation: u32) {
    let vec4s_per_row = layer.fan_in / 4u;
    let w0 = class_weights(layer, 0u);
    for (var k4 = 0u; k4 < vec4s_per_row; k4 = k4 + 1u) {
        // A loop, as in output_cross_entropy.wgsl: unrolled from a constant zero, a compiler may
        // fold 0 + x into x, which changes the sign of a zero gradient.
        var g = vec4<f32>(0.0);
        for (var c = 0u; c < layer.classes; c = c + 1u) {
            g = g + dl[c] * params[w0 + c * vec4s_per_row + k4];
        }
        let v = output_input(row, k4);
        du_below[du_row * vec4s_per_row + k4] = g * activation_derivative_at_output4(activation, v);
    }
}

// The output layer with softmax and cross-entropy, one invocation per row (one dispatch instead
// of two): logits[c] = b[c] + sum_k x[i, k] * W[c, k] (each sum starts at the bias and adds
// k = 0, 1, ... in order, as the CPU reference and the linear kernels do), probabilities, the
// row's loss -log p[label] (at loss_offset + row: a training step keeps all its micro-batches'
// losses, to sum them once in order), 1.0 where the arg-max is the label (for accuracy) and,
// when training, the gradient of weight * sum_i CE_i with respect to the logits,
// weight * (p - onehot). The logits are kept in `probs` until the probabilities replace them.
// With write_input_gradient, also the gradient at the input of the activation below (one
// dispatch fewer per backward): du[i, k] = (sum_c dlogits[i, c] * W[c, k]) * f'(u[i, k]), each
// sum adding c = 0, 1, ... in order as linear_input_gradient*.wgsl do, f' taken from x = f(u).
//
// Neighbouring invocations are neighbouring rows: their weight loads are the same addresses.

@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> params: array<f32>;
@group(0) @binding(3) var<storage, read> labels: array<u32>;
@group(0) @binding(4) var<storage, read_write> probs: array<f32>;
@group(0) @binding(5) var<storage, read_write> row_loss: array<f32>;
@group(0) @binding(6) var<storage, read_write> row_correct: array<f32>;
@group(0) @binding(7) var<storage, read_write> dlogits: array<f32>;
@group(0) @binding(8) var<storage, read_write> du_below: array<f32>;

@compute @workgroup_size(16)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if i >= args.rows {
        return;
    }
    let base = i * args.classes;
    let xi = i * args.fan_in;
    let last_class = args.classes - 1u;
    // Four classes at a time; classes past the last repeat it and are not stored.
    for (var c0 = 0u; c0 < args.classes; c0 = c0 + 4u) {
        let c = vec4<u32>(c0, min(c0 + 1u, last_class), min(c0 + 2u, last_class), min(c0 + 3u, last_class));
        let w = args.weight_offset + c * args.fan_in;
        let b = args.bias_offset + c;
        var s = vec4<f32>(params[b.x], params[b.y], params[b.z], params[b.w]);
        for (var k = 0u; k < args.fan_in; k = k + 1u) {
            s = s + x[xi + k] * vec4<f32>(params[w.x + k], params[w.y + k], params[w.z + k], params[w.w + k]);
        }
        probs[base + c0] = s.x;
        if c0 + 1u < args.classes {
            probs[base + c0 + 1u] = s.y;
        }
        if c0 + 2u < args.classes {
            probs[base + c0 + 2u] = s.z;
        }
        if c0 + 3u < args.classes {
            probs[base + c0 + 3u] = s.w;
        }
    }
    var best = 0u;
    var top = probs[base];
    for (var c = 1u; c < args.classes; c = c + 1u) {
        if probs[base + c] > top {
            top = probs[base + c];
            best = c;
        }
    }
    var sum = 0.0;
    for (var c = 0u; c < args.classes; c = c + 1u) {
        sum = sum + exp(probs[base + c] - top);
    }
    let log_sum = top + log(sum);
    let label = labels[args.label_offset + i];
    row_loss[args.loss_offset + i] = log_sum - probs[base + label];
    row_correct[i] = select(0.0, 1.0, best == label);
    for (var c = 0u; c < args.classes; c = c + 1u) {
        let probability = exp(probs[base + c] - log_sum);
        probs[base + c] = probability;
        if args.write_gradient == 1u {
            let one_hot = select(0.0, 1.0, label == c);
            dlogits[base + c] = args.gradient_weight * (probability - one_hot);
        }
    }
    if args.write_input_gradient == 1u {
        // The row's dlogits were stored just above by this invocation. Four inputs at a time
        // (inputs past the last repeat it and are not stored), each lane adding c in order.
        let last_input = args.fan_in - 1u;
        for (var k0 = 0u; k0 < args.fan_in; k0 = k0 + 4u) {
            let k = vec4<u32>(k0, min(k0 + 1u, last_input), min(k0 + 2u, last_input), min(k0 + 3u, last_input));
            var s = vec4<f32>(0.0);
            for (var c = 0u; c < args.classes; c = c + 1u) {
                let w = args.weight_offset + c * args.fan_in + k;
                s = s + dlogits[base + c] * vec4<f32>(params[w.x], params[w.y], params[w.z], params[w.w]);
            }
            let f = args.activation_below;
            du_below[xi + k.x] = s.x * activation_derivative_at_output(f, x[xi + k.x]);
            if k0 + 1u < args.fan_in {
                du_below[xi + k.y] = s.y * activation_derivative_at_output(f, x[xi + k.y]);
            }
            if k0 + 2u < args.fan_in {
                du_below[xi + k.z] = s.z * activation_derivative_at_output(f, x[xi + k.z]);
            }
            if k0 + 3u < args.fan_in {
                du_below[xi + k.w] = s.w * activation_derivative_at_output(f, x[xi + k.w]);
            }
        }
    }
}

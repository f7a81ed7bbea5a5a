// The output layer with softmax and cross-entropy, as output_cross_entropy.wgsl computes it, for
// layers whose input rows hold whole vec4s (fan_in and weight_offset multiples of 4) and at most
// four classes (every dataset of the Lab has two or three): one invocation per row
// (shared/output_cross_entropy_row.wgsl). A software adapter pays for every memory access of
// each invocation separately, and loading four at a time makes about a quarter as many.

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

fn output_input(row: u32, k4: u32) -> vec4<f32> {
    return x[row * (args.fan_in / 4u) + k4];
}

// The first `classes` lanes of a row's probabilities, into probs[row, 0..classes].
fn store_probabilities(row: u32, probability: vec4<f32>) {
    let n = args.classes;
    let at = row * n;
    probs[at] = probability.x;
    if n > 1u { probs[at + 1u] = probability.y; }
    if n > 2u { probs[at + 2u] = probability.z; }
    if n > 3u { probs[at + 3u] = probability.w; }
}

@compute @workgroup_size(16)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if i >= args.rows {
        return;
    }
    let layer = OutputLayer(args.classes, args.fan_in, args.weight_offset, args.bias_offset);
    let label = labels[args.label_offset + i];
    let outcome = softmax_cross_entropy(output_logits(layer, i), args.classes, label);
    row_loss[args.loss_offset + i] = outcome.loss;
    row_correct[i] = select(0.0, 1.0, outcome.best == label);
    store_probabilities(i, outcome.probability);
    if args.write_gradient != 1u {
        return;
    }
    let dl = logit_gradient(outcome, label, args.gradient_weight);
    store_logit_gradient(layer, i, dl);
    if args.write_input_gradient == 1u {
        store_output_input_gradient(layer, i, i, dl, args.activation_below);
    }
}

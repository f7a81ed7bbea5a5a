// Row-wise softmax and cross-entropy, one invocation per row: probabilities, the row's loss
// -log p[label], 1.0 where the arg-max is the label (for accuracy) and, when training, the
// gradient of weight * sum_i CE_i with respect to the logits, weight * (p - onehot).

struct SoftmaxParams {
    rows: u32,
    classes: u32,
    label_offset: u32,
    gradient_weight: f32,
    write_gradient: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<uniform> dims: SoftmaxParams;
@group(0) @binding(1) var<storage, read> logits: array<f32>;
@group(0) @binding(2) var<storage, read> labels: array<u32>;
@group(0) @binding(3) var<storage, read_write> probs: array<f32>;
@group(0) @binding(4) var<storage, read_write> row_loss: array<f32>;
@group(0) @binding(5) var<storage, read_write> row_correct: array<f32>;
@group(0) @binding(6) var<storage, read_write> dlogits: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if i >= dims.rows {
        return;
    }
    let base = i * dims.classes;
    var best = 0u;
    var top = logits[base];
    for (var c = 1u; c < dims.classes; c = c + 1u) {
        if logits[base + c] > top {
            top = logits[base + c];
            best = c;
        }
    }
    var sum = 0.0;
    for (var c = 0u; c < dims.classes; c = c + 1u) {
        sum = sum + exp(logits[base + c] - top);
    }
    let log_sum = top + log(sum);
    let label = labels[dims.label_offset + i];
    for (var c = 0u; c < dims.classes; c = c + 1u) {
        let probability = exp(logits[base + c] - log_sum);
        probs[base + c] = probability;
        if dims.write_gradient == 1u {
            let one_hot = select(0.0, 1.0, label == c);
            dlogits[base + c] = dims.gradient_weight * (probability - one_hot);
        }
    }
    row_loss[i] = log_sum - logits[base + label];
    row_correct[i] = select(0.0, 1.0, best == label);
}

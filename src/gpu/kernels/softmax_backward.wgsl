// Gradient of weight * sum_i CE_i with respect to the logits: weight * (p - onehot).

struct Dims {
    rows: u32,
    classes: u32,
    label_offset: u32,
    weight: f32,
}

@group(0) @binding(0) var<uniform> dims: Dims;
@group(0) @binding(1) var<storage, read> probs: array<f32>;
@group(0) @binding(2) var<storage, read> labels: array<u32>;
@group(0) @binding(3) var<storage, read_write> dlogits: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let e = id.x;
    if e >= dims.rows * dims.classes {
        return;
    }
    let i = e / dims.classes;
    let c = e % dims.classes;
    let one_hot = select(0.0, 1.0, labels[dims.label_offset + i] == c);
    dlogits[e] = dims.weight * (probs[e] - one_hot);
}

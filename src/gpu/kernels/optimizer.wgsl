// One optimizer update per parameter. kind: 0 SGD, 1 SGD with momentum, 2 Adam (L2 decay in the
// gradient), 3 AdamW (decoupled decay). Bias corrections 1 - beta^t come from the host.

struct OptimizerParams {
    len: u32,
    kind: u32,
    learning_rate: f32,
    weight_decay: f32,
    beta1: f32,
    beta2: f32,
    eps: f32,
    momentum: f32,
    correction1: f32,
    correction2: f32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<uniform> dims: OptimizerParams;
@group(0) @binding(1) var<storage, read> grads: array<f32>;
@group(0) @binding(2) var<storage, read_write> params: array<f32>;
@group(0) @binding(3) var<storage, read_write> first: array<f32>;
@group(0) @binding(4) var<storage, read_write> second: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if i >= dims.len {
        return;
    }
    let lr = dims.learning_rate;
    var p = params[i];
    var g = grads[i];
    switch dims.kind {
        case 0u: {
            p = p - lr * (g + dims.weight_decay * p);
        }
        case 1u: {
            let v = dims.momentum * first[i] + g + dims.weight_decay * p;
            first[i] = v;
            p = p - lr * v;
        }
        default: {
            if dims.kind == 3u {
                p = p - lr * dims.weight_decay * p;
            } else {
                g = g + dims.weight_decay * p;
            }
            let m = dims.beta1 * first[i] + (1.0 - dims.beta1) * g;
            let v = dims.beta2 * second[i] + (1.0 - dims.beta2) * g * g;
            first[i] = m;
            second[i] = v;
            p = p - lr * (m / dims.correction1) / (sqrt(v / dims.correction2) + dims.eps);
        }
    }
    params[i] = p;
}

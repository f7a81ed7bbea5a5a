// One optimizer update of parameter i from its gradient, writing `params`, `first` and
// `second` (array<f32>, which the kernel that includes this declares). kind as OptimizerKind:
// 0 SGD, 1 SGD with momentum, 2 Adam (L2 decay in the gradient), 3 AdamW (decoupled decay).
// Bias corrections 1 - beta^t come from the host. optimizer.wgsl and
// gradient_norm_and_optimizer.wgsl both update through this, so their results agree bit for bit.

struct OptimizerSettings {
    kind: u32,
    learning_rate: f32,
    weight_decay: f32,
    beta1: f32,
    beta2: f32,
    eps: f32,
    momentum: f32,
    correction1: f32,
    correction2: f32,
}

fn update_parameter(i: u32, gradient: f32, o: OptimizerSettings) {
    let lr = o.learning_rate;
    var p = params[i];
    var g = gradient;
    switch o.kind {
        case 0u: {
            p = p - lr * (g + o.weight_decay * p);
        }
        case 1u: {
            let v = o.momentum * first[i] + g + o.weight_decay * p;
            first[i] = v;
            p = p - lr * v;
        }
        default: {
            if o.kind == 3u {
                p = p - lr * o.weight_decay * p;
            } else {
                g = g + o.weight_decay * p;
            }
            let m = o.beta1 * first[i] + (1.0 - o.beta1) * g;
            let v = o.beta2 * second[i] + (1.0 - o.beta2) * g * g;
            first[i] = m;
            second[i] = v;
            p = p - lr * (m / o.correction1) / (sqrt(v / o.correction2) + o.eps);
        }
    }
    params[i] = p;
}

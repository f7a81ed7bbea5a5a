// One optimizer update of parameter i from its gradient, writing `params`, `first` and
// `second` (array<f32>, which the kernel that includes this declares). `kind` is one of the
// OPTIMIZER_* codes generated from `OptimizerKind`: SGD, SGD with momentum, Adam (L2 decay in the
// gradient), AdamW (decoupled decay); an unknown code makes the parameter NaN.
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
        case OPTIMIZER_SGD: {
            p = p - lr * (g + o.weight_decay * p);
        }
        case OPTIMIZER_MOMENTUM: {
            let v = o.momentum * first[i] + g + o.weight_decay * p;
            first[i] = v;
            p = p - lr * v;
        }
        case OPTIMIZER_ADAM, OPTIMIZER_ADAMW: {
            if o.kind == OPTIMIZER_ADAMW {
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
        default: {
            p = bitcast<f32>(0x7fc00000u | o.kind);
        }
    }
    params[i] = p;
}

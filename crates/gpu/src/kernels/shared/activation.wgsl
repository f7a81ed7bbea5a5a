// Activations shared by the kernels that apply them (prepended to each kernel's source).
// The ACTIVATION_* codes are generated from `ActivationCode` in kernels/mod.rs; GELU is the tanh
// approximation, as the CPU reference. An unknown code gives NaN, never another activation.

// A quiet NaN carrying the unknown code (computed at run time: a constant NaN is a
// shader-creation error).
fn unknown_mode(code: u32) -> f32 {
    return bitcast<f32>(0x7fc00000u | code);
}

const GELU_C: f32 = 0.7978845608028654;
const GELU_A: f32 = 0.044715;

// tanh that saturates as libm's does. Drivers may compute tanh from exponentials, which gives
// inf / inf = NaN for large |x|; in f32, tanh(x) rounds to +-1 for |x| > 9.01 anyway.
fn saturating_tanh(x: f32) -> f32 {
    return tanh(clamp(x, -10.0, 10.0));
}

fn activate(kind: u32, v: f32) -> f32 {
    switch kind {
        case ACTIVATION_IDENTITY: { return v; }
        case ACTIVATION_RELU: { return max(v, 0.0); }
        case ACTIVATION_TANH: { return saturating_tanh(v); }
        case ACTIVATION_GELU: { return 0.5 * v * (1.0 + saturating_tanh(GELU_C * (v + GELU_A * v * v * v))); }
        default: { return unknown_mode(kind); }
    }
}

// f'(v), evaluated at the activation's input.
fn activation_derivative(kind: u32, v: f32) -> f32 {
    switch kind {
        case ACTIVATION_IDENTITY: { return 1.0; }
        case ACTIVATION_RELU: { return select(0.0, 1.0, v > 0.0); }
        case ACTIVATION_TANH: { let t = saturating_tanh(v); return 1.0 - t * t; }
        case ACTIVATION_GELU: {
            let t = saturating_tanh(GELU_C * (v + GELU_A * v * v * v));
            let sech2 = 1.0 - t * t;
            // As the CPU reference: 0 where tanh saturated, not 0 * (v * v overflowing) = NaN.
            var curvature = 0.0;
            if sech2 != 0.0 {
                curvature = 0.5 * v * sech2 * GELU_C * (1.0 + 3.0 * GELU_A * v * v);
            }
            return 0.5 * (1.0 + t) + curvature;
        }
        default: { return unknown_mode(kind); }
    }
}

// f'(u) from a = f(u), for the activations whose output determines it (identity, ReLU, tanh;
// ActivationCode::derivative_from_output): the value activation_derivative gives at u, since
// a is the tanh that it recomputes, and a > 0 exactly where u > 0.
// GELU's output does not give its derivative: GpuOps refuses it before any dispatch.
fn activation_derivative_at_output(kind: u32, a: f32) -> f32 {
    switch kind {
        case ACTIVATION_RELU: { return select(0.0, 1.0, a > 0.0); }
        case ACTIVATION_TANH: { return 1.0 - a * a; }
        case ACTIVATION_IDENTITY: { return 1.0; }
        default: { return unknown_mode(kind); }
    }
}

// The vec4 forms below compute each lane exactly as the scalar functions above, with one
// switch per vec4 instead of one per lane: a kernel that applies an activation to a block of
// values inlines it many times, and a software adapter compiles every copy (SwiftShader
// compiled linear_backward.wgsl in about 40 % less time).

fn saturating_tanh4(x: vec4<f32>) -> vec4<f32> {
    return tanh(clamp(x, vec4<f32>(-10.0), vec4<f32>(10.0)));
}

// `activate` on each lane.
fn activate4(kind: u32, v: vec4<f32>) -> vec4<f32> {
    switch kind {
        case ACTIVATION_IDENTITY: { return v; }
        case ACTIVATION_RELU: { return max(v, vec4<f32>(0.0)); }
        case ACTIVATION_TANH: { return saturating_tanh4(v); }
        case ACTIVATION_GELU: { return 0.5 * v * (1.0 + saturating_tanh4(GELU_C * (v + GELU_A * v * v * v))); }
        default: { return vec4<f32>(unknown_mode(kind)); }
    }
}

// `activation_derivative` on each lane.
fn activation_derivative4(kind: u32, v: vec4<f32>) -> vec4<f32> {
    switch kind {
        case ACTIVATION_IDENTITY: { return vec4<f32>(1.0); }
        case ACTIVATION_RELU: { return select(vec4<f32>(0.0), vec4<f32>(1.0), v > vec4<f32>(0.0)); }
        case ACTIVATION_TANH: { let t = saturating_tanh4(v); return 1.0 - t * t; }
        case ACTIVATION_GELU: {
            let t = saturating_tanh4(GELU_C * (v + GELU_A * v * v * v));
            let sech2 = 1.0 - t * t;
            // As the scalar form: 0 where tanh saturated (the other operand may be NaN there).
            let curvature = select(
                vec4<f32>(0.0),
                0.5 * v * sech2 * GELU_C * (1.0 + 3.0 * GELU_A * v * v),
                sech2 != vec4<f32>(0.0),
            );
            return 0.5 * (1.0 + t) + curvature;
        }
        default: { return vec4<f32>(unknown_mode(kind)); }
    }
}

// `activation_derivative_at_output` on each lane.
fn activation_derivative_at_output4(kind: u32, a: vec4<f32>) -> vec4<f32> {
    switch kind {
        case ACTIVATION_RELU: { return select(vec4<f32>(0.0), vec4<f32>(1.0), a > vec4<f32>(0.0)); }
        case ACTIVATION_TANH: { return 1.0 - a * a; }
        case ACTIVATION_IDENTITY: { return vec4<f32>(1.0); }
        default: { return vec4<f32>(unknown_mode(kind)); }
    }
}

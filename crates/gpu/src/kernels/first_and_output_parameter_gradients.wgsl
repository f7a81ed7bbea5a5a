// The parameter gradients of the first layer and of the output layer in one dispatch, the last
// of a backward pass: the first output_fan_in / 4 invocations add the output layer's (from the
// logit gradient and the top layer's activations, which the output dispatch left), the rest the
// first layer's (as linear_parameter_gradient_vec4_out.wgsl). Both read only what earlier
// dispatches wrote and add into different parameters; each sum keeps its kernel's order, so the
// numbers are those of the two separate kernels bit for bit. For a first layer whose outputs are
// whole vec4s and whose inputs are not (2-D data), an output layer of at most four classes over
// an input width that is a multiple of 4; the engine records the separate kernels otherwise.

@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> dy: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> grads: array<f32>;
@group(0) @binding(4) var<storage, read> a_top: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read> dlogits: array<f32>;

@compute @workgroup_size(8)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let output_jobs = output_parameter_gradient_jobs();
    if id.x < output_jobs {
        output_parameter_gradient_block(id.x);
    } else {
        parameter_gradient_vec4_out_block(id.x - output_jobs);
    }
}

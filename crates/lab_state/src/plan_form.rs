//! The planner page's form as plain state: what each field holds as typed, the presets it
//! offers, and the request it makes for `sim::planner` (every field checked, a decimal comma
//! accepted), so the page is a thin view over it.

use gradlab_sim::engine_memory::LabEngine;
use gradlab_sim::planner::{
    model, parse_memory, Architecture, Family, LoraTargets, Method, Optimizer, PlanError, PlanRequest, Precision,
    Sharding, Transformer,
};

/// The model id of the custom dimensions.
pub const CUSTOM: &str = "custom";

/// Device memories a learner picks from (GiB), with what has that much.
pub const MEMORY_PRESETS: [(u64, &str); 7] = [
    (8, "RTX 4060 / 3070"),
    (12, "RTX 3060 / 4070"),
    (16, "RTX 4080 / T4"),
    (24, "RTX 3090 / 4090 / A10"),
    (48, "RTX 6000 Ada / A40 / L40S"),
    (80, "A100 80GB / H100"),
    (141, "H200"),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MethodChoice {
    Full,
    Lora,
    Qlora,
}

/// A transformer's dimensions, as typed (they start as GPT-2's).
#[derive(Debug, Clone, PartialEq)]
pub struct CustomModel {
    pub family: Family,
    pub layers: String,
    pub hidden: String,
    pub heads: String,
    pub kv_heads: String,
    pub intermediate: String,
    pub vocabulary: String,
    pub positions: String,
    pub tied_embeddings: bool,
}

impl Default for CustomModel {
    fn default() -> Self {
        Self {
            family: Family::Gpt2,
            layers: "12".into(),
            hidden: "768".into(),
            heads: "12".into(),
            kv_heads: "12".into(),
            intermediate: "3072".into(),
            vocabulary: "50257".into(),
            positions: "1024".into(),
            tied_embeddings: true,
        }
    }
}

impl CustomModel {
    fn architecture(&self) -> Result<Transformer, PlanError> {
        let transformer = Transformer {
            family: self.family,
            layers: whole("layers", &self.layers)?,
            hidden: whole("hidden", &self.hidden)?,
            heads: whole("heads", &self.heads)?,
            kv_heads: whole("kv_heads", &self.kv_heads)?,
            intermediate: whole("intermediate", &self.intermediate)?,
            vocabulary: whole("vocabulary", &self.vocabulary)?,
            positions: if self.family == Family::Gpt2 {
                whole("positions", &self.positions)?
            } else {
                0
            },
            tied_embeddings: self.tied_embeddings,
        };
        transformer.check()?;
        Ok(transformer)
    }
}

/// The form, as the learner typed it.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanForm {
    /// A preset's id, or [`CUSTOM`].
    pub model: String,
    pub custom: CustomModel,
    /// The engine the Lab's own models are planned on.
    pub engine: LabEngine,
    pub method: MethodChoice,
    pub lora_rank: String,
    pub all_linear: bool,
    pub precision: Precision,
    pub optimizer: Optimizer,
    pub checkpointing: bool,
    pub sequence_length: String,
    pub memory_gib: String,
    pub devices: String,
    pub sharding: Sharding,
    pub target_batch: String,
}

impl Default for PlanForm {
    /// The question the Lab's learners bring: an 8B model with LoRA on a 24 GB card.
    fn default() -> Self {
        Self {
            model: "llama-3.1-8b".into(),
            custom: CustomModel::default(),
            engine: LabEngine::Webgpu,
            method: MethodChoice::Lora,
            lora_rank: "16".into(),
            all_linear: false,
            precision: Precision::Bf16Mixed,
            optimizer: Optimizer::AdamW,
            checkpointing: true,
            sequence_length: "2048".into(),
            memory_gib: "24".into(),
            devices: "1".into(),
            sharding: Sharding::None,
            target_batch: "256".into(),
        }
    }
}

fn whole(field: &'static str, text: &str) -> Result<u64, PlanError> {
    text.trim().parse::<u64>().map_err(|_| PlanError {
        field,
        problem: format!("\"{}\" is not a whole number", text.trim()),
    })
}

impl PlanForm {
    /// Whether the chosen model is one of the Lab's own (planned on its engines).
    pub fn is_lab_model(&self) -> bool {
        matches!(
            model(&self.model).map(|m| m.architecture),
            Ok(Architecture::LabMlp { .. })
        )
    }

    /// Picks a model. Moving to the Lab's own network sets what its engines do (full training
    /// in fp32, plain SGD, every activation kept, one point per example) and a budget in KiB;
    /// moving back restores the defaults of a language model.
    pub fn choose_model(&mut self, id: &str) {
        let was_lab = self.is_lab_model();
        self.model = id.to_string();
        if self.is_lab_model() && !was_lab {
            *self = Self {
                model: self.model.clone(),
                method: MethodChoice::Full,
                precision: Precision::Fp32,
                optimizer: Optimizer::Sgd,
                checkpointing: false,
                sequence_length: "1".into(),
                memory_gib: "128 KiB".into(),
                devices: "1".into(),
                sharding: Sharding::None,
                ..self.clone()
            };
        } else if was_lab && !self.is_lab_model() {
            let defaults = Self::default();
            *self = Self {
                model: self.model.clone(),
                custom: self.custom.clone(),
                engine: self.engine,
                ..defaults
            };
        }
    }

    /// The planner's request, or the first field that is wrong.
    pub fn request(&self) -> Result<PlanRequest, PlanError> {
        let architecture = if self.model == CUSTOM {
            Architecture::Transformer(self.custom.architecture()?)
        } else {
            match model(&self.model)?.architecture {
                Architecture::LabMlp { .. } => Architecture::LabMlp { engine: self.engine },
                other => other,
            }
        };
        let budget_bytes = parse_memory(&self.memory_gib)?;
        let targets = if self.all_linear {
            LoraTargets::AllLinear
        } else {
            LoraTargets::Attention
        };
        let method = match self.method {
            MethodChoice::Full => Method::Full,
            MethodChoice::Lora => Method::Lora {
                rank: whole("lora_rank", &self.lora_rank)?,
                targets,
            },
            MethodChoice::Qlora => Method::Qlora {
                rank: whole("lora_rank", &self.lora_rank)?,
                targets,
            },
        };
        let request = PlanRequest {
            architecture,
            method,
            precision: self.precision,
            optimizer: self.optimizer,
            checkpointing: self.checkpointing,
            sequence_length: whole("seq_len", &self.sequence_length)?,
            budget_bytes,
            devices: whole("devices", &self.devices)?,
            sharding: self.sharding,
            target_batch: whole("target_batch", &self.target_batch)?,
        };
        request.check()?;
        Ok(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gradlab_sim::planner::Outcome;

    #[test]
    fn the_default_form_plans_an_8b_lora_on_a_24_gib_card() {
        let request = PlanForm::default().request().unwrap();
        let Outcome::Fits(plan) = request.plan().unwrap() else {
            panic!("fits")
        };
        assert_eq!(plan.effective_batch, 256);
        assert!(plan.memory_bytes.total <= plan.memory_bytes.budget);
    }

    #[test]
    fn custom_dimensions_start_as_gpt2_and_count_as_it() {
        let form = PlanForm {
            model: CUSTOM.into(),
            sequence_length: "1024".into(),
            ..PlanForm::default()
        };
        let request = form.request().unwrap();
        assert_eq!(request.architecture.parameters().total, 124_439_808);
    }

    #[test]
    fn the_labs_network_is_planned_as_its_engines_train_it_and_budgets_take_units() {
        let mut form = PlanForm::default();
        form.choose_model("lab-mlp");
        assert!(form.is_lab_model());
        let request = form.request().unwrap();
        assert_eq!(request.budget_bytes, 128 * 1024);
        assert_eq!(request.precision, Precision::Fp32);
        assert_eq!(request.sequence_length, 1);
        let Outcome::Fits(plan) = request.plan().unwrap() else {
            panic!("the Lab's network fits in 128 KiB")
        };
        assert_eq!(
            plan.memory_bytes.margin, 0,
            "the engines' buffers are counted, not estimated"
        );
        form.engine = LabEngine::Cpu;
        assert_eq!(
            form.request().unwrap().architecture,
            Architecture::LabMlp { engine: LabEngine::Cpu }
        );
        form.choose_model("gpt2");
        assert_eq!(form.sequence_length, "2048");
        assert_eq!(form.precision, Precision::Bf16Mixed);
        assert_eq!(parse_memory("512 MiB").unwrap(), 512 << 20);
        assert_eq!(parse_memory(" 24 ").unwrap(), 24 << 30);
        assert_eq!(parse_memory("1,5 kib").unwrap(), 1536);
    }

    #[test]
    fn each_bad_field_is_named() {
        let with = |change: &dyn Fn(&mut PlanForm)| {
            let mut form = PlanForm::default();
            change(&mut form);
            form.request().unwrap_err().field
        };
        assert_eq!(with(&|f| f.memory_gib = "0".into()), "memory");
        assert_eq!(with(&|f| f.memory_gib = "lots".into()), "memory");
        assert_eq!(with(&|f| f.memory_gib = "-8".into()), "memory");
        assert_eq!(with(&|f| f.sequence_length = "-1".into()), "seq_len");
        assert_eq!(with(&|f| f.sequence_length = "0".into()), "seq_len");
        assert_eq!(with(&|f| f.devices = "2.5".into()), "devices");
        assert_eq!(with(&|f| f.target_batch = "".into()), "target_batch");
        assert_eq!(with(&|f| f.lora_rank = "0".into()), "lora_rank");
        assert_eq!(with(&|f| f.model = "nope".into()), "model");
        assert_eq!(with(&|f| f.sharding = Sharding::Zero3), "sharding", "one device");
        assert_eq!(with(&|f| f.memory_gib = "24 TB".into()), "memory");
        assert_eq!(with(&|f| f.memory_gib = "0 KiB".into()), "memory");
        let custom = |change: &dyn Fn(&mut CustomModel)| {
            with(&|f| {
                f.model = CUSTOM.into();
                change(&mut f.custom);
            })
        };
        assert_eq!(custom(&|c| c.heads = "7".into()), "heads", "7 heads do not divide 768");
        assert_eq!(custom(&|c| c.layers = "1000000000000".into()), "layers");
        assert_eq!(custom(&|c| c.vocabulary = "many".into()), "vocabulary");
        let comma = PlanForm {
            memory_gib: "23,5".into(),
            ..PlanForm::default()
        };
        assert_eq!(
            comma.request().unwrap().budget_bytes,
            (23.5 * (1u64 << 30) as f64) as u64
        );
    }
}

//! SCORM 1.2 and SCORM 2004 (4th edition), as plain data: what the app writes into an LMS's
//! data model ([`data_model`]), how quiz progress fits in `suspend_data` ([`suspend`]), and,
//! natively, the content package a course author uploads ([`manifest`], [`package`]).
//! The web layer only finds the LMS's API object and passes these values through it.

pub mod data_model;
pub mod lms_quiz;
pub mod suspend;

#[cfg(not(target_arch = "wasm32"))]
pub mod manifest;
#[cfg(not(target_arch = "wasm32"))]
pub mod package;

/// The data model element holding quiz progress between launches (both versions).
pub const SUSPEND_DATA: &str = "cmi.suspend_data";

/// The two SCORM versions every major LMS imports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScormVersion {
    /// SCORM 1.2: the API object is `window.API`, functions `LMSInitialize` ...
    Scorm12,
    /// SCORM 2004 4th edition: `window.API_1484_11`, functions `Initialize` ...
    Scorm2004,
}

impl ScormVersion {
    pub const ALL: [ScormVersion; 2] = [ScormVersion::Scorm12, ScormVersion::Scorm2004];

    /// The name of the API object an LMS puts on one of the SCO's ancestor windows.
    pub fn api_object(self) -> &'static str {
        match self {
            ScormVersion::Scorm12 => "API",
            ScormVersion::Scorm2004 => "API_1484_11",
        }
    }

    /// The API's function names, in the order: initialize, terminate, get, set, commit,
    /// last error, error string.
    pub fn functions(self) -> ApiFunctions {
        match self {
            ScormVersion::Scorm12 => ApiFunctions {
                initialize: "LMSInitialize",
                terminate: "LMSFinish",
                get_value: "LMSGetValue",
                set_value: "LMSSetValue",
                commit: "LMSCommit",
                get_last_error: "LMSGetLastError",
                get_error_string: "LMSGetErrorString",
            },
            ScormVersion::Scorm2004 => ApiFunctions {
                initialize: "Initialize",
                terminate: "Terminate",
                get_value: "GetValue",
                set_value: "SetValue",
                commit: "Commit",
                get_last_error: "GetLastError",
                get_error_string: "GetErrorString",
            },
        }
    }

    /// The element an LMS fills with the pass mark from the manifest (read-only for the SCO).
    pub fn mastery_element(self) -> &'static str {
        match self {
            ScormVersion::Scorm12 => "cmi.student_data.mastery_score",
            ScormVersion::Scorm2004 => "cmi.scaled_passing_score",
        }
    }

    /// The element holding whether the SCO was completed before (read at launch).
    pub fn completion_element(self) -> &'static str {
        match self {
            ScormVersion::Scorm12 => "cmi.core.lesson_status",
            ScormVersion::Scorm2004 => "cmi.completion_status",
        }
    }

    /// The element of the learner's id (to tell learners apart on a shared computer).
    pub fn learner_id_element(self) -> &'static str {
        match self {
            ScormVersion::Scorm12 => "cmi.core.student_id",
            ScormVersion::Scorm2004 => "cmi.learner_id",
        }
    }

    /// Most characters `suspend_data` may hold: SCORM 1.2's CMIString4096, SCORM 2004's 64,000.
    pub fn suspend_data_limit(self) -> usize {
        match self {
            ScormVersion::Scorm12 => 4096,
            ScormVersion::Scorm2004 => 64_000,
        }
    }

    /// Command-line and file-name key.
    pub fn key(self) -> &'static str {
        match self {
            ScormVersion::Scorm12 => "scorm12",
            ScormVersion::Scorm2004 => "scorm2004",
        }
    }
}

/// The names of one version's API functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApiFunctions {
    pub initialize: &'static str,
    pub terminate: &'static str,
    pub get_value: &'static str,
    pub set_value: &'static str,
    pub commit: &'static str,
    pub get_last_error: &'static str,
    pub get_error_string: &'static str,
}

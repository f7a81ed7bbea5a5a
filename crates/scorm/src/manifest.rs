//! `imsmanifest.xml` of a SCORM 1.2 or SCORM 2004 4th edition package, written with quick-xml,
//! and the structural check every package passes (well-formed, identifiers unique, every
//! reference resolved, every file present).
//!
//! One SCO per Lab experiment and one for the quiz. Every SCO launches the same `index.html`
//! with the item's `parameters` (`?embed=quiz`, `?embed=lab&scenario=...&hide=menu`), and
//! depends on one asset resource that lists every file of the app, so an LMS copies them all.

use std::collections::{BTreeSet, HashSet};

use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};
use quick_xml::{Reader, Writer};
use thiserror::Error;

use super::ScormVersion;
use gradlab_i18n::{Language, Localizer};
use gradlab_route::SANDBOX;
use gradlab_sim::scenario::SCENARIO_IDS;

/// What a course author chooses for a package.
#[derive(Debug, Clone, PartialEq)]
pub struct PackageOptions {
    pub version: ScormVersion,
    /// The language of the titles and of the app the SCOs open.
    pub language: Language,
    /// Lab experiments, one SCO each, in this order.
    pub scenarios: Vec<String>,
    pub quiz: bool,
    /// Pass mark of the quiz in whole percent, written into the manifest; the LMS passes it to
    /// the quiz, which reports passed or failed against it.
    pub pass_mark: u8,
}

#[derive(Debug, Error)]
pub enum ManifestError {
    #[error("unknown Lab experiment \"{0}\"; the experiments are {list}", list = experiment_list())]
    UnknownScenario(String),
    #[error("the experiment \"{0}\" is listed twice")]
    DuplicateScenario(String),
    #[error("a package needs at least one SCO: include the quiz or a Lab experiment")]
    Empty,
    #[error("the pass mark must be a whole percent from 0 to 100, not {0}")]
    PassMark(u8),
    #[error("the app's messages could not be loaded: {0}")]
    Messages(String),
    #[error("could not write the manifest: {0}")]
    Write(String),
}

/// Every experiment a package can include: the presets and the sandbox.
pub fn experiment_ids() -> Vec<&'static str> {
    SCENARIO_IDS.iter().copied().chain([SANDBOX]).collect()
}

fn experiment_list() -> String {
    experiment_ids().join(", ")
}

impl PackageOptions {
    /// The default package: every preset experiment, the quiz, the bank's pass mark.
    pub fn all(version: ScormVersion, language: Language, pass_mark: u8) -> Self {
        Self {
            version,
            language,
            scenarios: SCENARIO_IDS.iter().map(|s| s.to_string()).collect(),
            quiz: true,
            pass_mark,
        }
    }

    pub fn validate(&self) -> Result<(), ManifestError> {
        let known = experiment_ids();
        let mut seen = HashSet::new();
        for id in &self.scenarios {
            if !known.contains(&id.as_str()) {
                return Err(ManifestError::UnknownScenario(id.clone()));
            }
            if !seen.insert(id) {
                return Err(ManifestError::DuplicateScenario(id.clone()));
            }
        }
        if self.scenarios.is_empty() && !self.quiz {
            return Err(ManifestError::Empty);
        }
        if self.pass_mark > 100 {
            return Err(ManifestError::PassMark(self.pass_mark));
        }
        Ok(())
    }
}

/// An element of the manifest before it is written.
struct Node {
    name: &'static str,
    attributes: Vec<(&'static str, String)>,
    text: Option<String>,
    children: Vec<Node>,
}

impl Node {
    fn new(name: &'static str) -> Self {
        Self {
            name,
            attributes: Vec::new(),
            text: None,
            children: Vec::new(),
        }
    }

    fn attr(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.attributes.push((name, value.into()));
        self
    }

    fn text(mut self, text: impl Into<String>) -> Self {
        self.text = Some(text.into());
        self
    }

    fn child(mut self, child: Node) -> Self {
        self.children.push(child);
        self
    }

    fn children(mut self, children: impl IntoIterator<Item = Node>) -> Self {
        self.children.extend(children);
        self
    }

    fn write(&self, writer: &mut Writer<Vec<u8>>) -> std::io::Result<()> {
        let mut start = BytesStart::new(self.name);
        for (name, value) in &self.attributes {
            start.push_attribute((*name, value.as_str()));
        }
        if self.text.is_none() && self.children.is_empty() {
            return writer.write_event(Event::Empty(start));
        }
        writer.write_event(Event::Start(start))?;
        if let Some(text) = &self.text {
            writer.write_event(Event::Text(BytesText::new(text)))?;
        }
        for child in &self.children {
            child.write(writer)?;
        }
        writer.write_event(Event::End(BytesEnd::new(self.name)))
    }
}

/// One SCO: its identifier suffix, title and launch parameters.
struct Sco {
    key: String,
    title: String,
    parameters: String,
    is_quiz: bool,
}

fn scos(options: &PackageOptions, texts: &Localizer) -> Vec<Sco> {
    let lang = options.language.tag();
    let mut list: Vec<Sco> = options
        .scenarios
        .iter()
        .map(|id| Sco {
            key: format!("lab-{id}"),
            title: texts.text(&format!("scenario-{id}-title")),
            parameters: format!("?embed=lab&scenario={id}&hide=menu&lang={lang}"),
            is_quiz: false,
        })
        .collect();
    if options.quiz {
        list.push(Sco {
            key: "quiz".into(),
            title: texts.text("quiz-title"),
            parameters: format!("?embed=quiz&lang={lang}"),
            is_quiz: true,
        });
    }
    list
}

/// The entry page every SCO launches.
pub const LAUNCH_PAGE: &str = "index.html";
const APP_RESOURCE: &str = "res-app";

fn item(options: &PackageOptions, sco: &Sco) -> Node {
    let mut node = Node::new("item")
        .attr("identifier", format!("item-{}", sco.key))
        .attr("identifierref", format!("res-{}", sco.key))
        .attr("isvisible", "true")
        .attr("parameters", sco.parameters.clone())
        .child(Node::new("title").text(sco.title.clone()));
    if sco.is_quiz {
        node = match options.version {
            ScormVersion::Scorm12 => node.child(Node::new("adlcp:masteryscore").text(options.pass_mark.to_string())),
            ScormVersion::Scorm2004 => {
                let measure = f64::from(options.pass_mark) / 100.0;
                node.child(
                    Node::new("imsss:sequencing").child(
                        Node::new("imsss:objectives").child(
                            Node::new("imsss:primaryObjective")
                                .attr("objectiveID", "quiz-passed")
                                .attr("satisfiedByMeasure", "true")
                                .child(Node::new("imsss:minNormalizedMeasure").text(format!("{measure}"))),
                        ),
                    ),
                )
            }
        };
    }
    node
}

fn scorm_type_attribute(version: ScormVersion) -> &'static str {
    match version {
        ScormVersion::Scorm12 => "adlcp:scormtype",
        ScormVersion::Scorm2004 => "adlcp:scormType",
    }
}

/// The manifest of a package holding `files` (paths relative to the package root, `/`-separated).
pub fn manifest_xml(options: &PackageOptions, files: &BTreeSet<String>) -> Result<String, ManifestError> {
    options.validate()?;
    let texts = Localizer::new(options.language).map_err(|e| ManifestError::Messages(e.to_string()))?;
    let scos = scos(options, &texts);
    let version = options.version;
    let scorm_type = scorm_type_attribute(version);
    let lang = options.language.tag();
    let (namespaces, schema_version): (&[(&str, &str)], &str) = match version {
        ScormVersion::Scorm12 => (
            &[
                ("xmlns", "http://www.imsproject.org/xsd/imscp_rootv1p1p2"),
                ("xmlns:adlcp", "http://www.adlnet.org/xsd/adlcp_rootv1p2"),
                ("xmlns:xsi", "http://www.w3.org/2001/XMLSchema-instance"),
                (
                    "xsi:schemaLocation",
                    "http://www.imsproject.org/xsd/imscp_rootv1p1p2 imscp_rootv1p1p2.xsd \
                     http://www.imsglobal.org/xsd/imsmd_rootv1p2p1 imsmd_rootv1p2p1.xsd \
                     http://www.adlnet.org/xsd/adlcp_rootv1p2 adlcp_rootv1p2.xsd",
                ),
            ],
            "1.2",
        ),
        ScormVersion::Scorm2004 => (
            &[
                ("xmlns", "http://www.imsglobal.org/xsd/imscp_v1p1"),
                ("xmlns:adlcp", "http://www.adlnet.org/xsd/adlcp_v1p3"),
                ("xmlns:adlseq", "http://www.adlnet.org/xsd/adlseq_v1p3"),
                ("xmlns:adlnav", "http://www.adlnet.org/xsd/adlnav_v1p3"),
                ("xmlns:imsss", "http://www.imsglobal.org/xsd/imsss"),
                ("xmlns:xsi", "http://www.w3.org/2001/XMLSchema-instance"),
                (
                    "xsi:schemaLocation",
                    "http://www.imsglobal.org/xsd/imscp_v1p1 imscp_v1p1.xsd \
                     http://www.adlnet.org/xsd/adlcp_v1p3 adlcp_v1p3.xsd \
                     http://www.adlnet.org/xsd/adlseq_v1p3 adlseq_v1p3.xsd \
                     http://www.adlnet.org/xsd/adlnav_v1p3 adlnav_v1p3.xsd \
                     http://www.imsglobal.org/xsd/imsss imsss_v1p0.xsd",
                ),
            ],
            "2004 4th Edition",
        ),
    };
    let mut manifest = Node::new("manifest")
        .attr(
            "identifier",
            format!("gradient-accumulation-lab-{}-{lang}", version.key()),
        )
        .attr("version", "1");
    for (name, value) in namespaces {
        manifest = manifest.attr(name, *value);
    }
    let organization = Node::new("organization")
        .attr("identifier", "org-gradlab")
        .child(Node::new("title").text(texts.text("app-title")))
        .children(scos.iter().map(|sco| item(options, sco)));
    let sco_resources = scos.iter().map(|sco| {
        Node::new("resource")
            .attr("identifier", format!("res-{}", sco.key))
            .attr("type", "webcontent")
            .attr(scorm_type, "sco")
            .attr("href", LAUNCH_PAGE)
            .child(Node::new("file").attr("href", LAUNCH_PAGE))
            .child(Node::new("dependency").attr("identifierref", APP_RESOURCE))
    });
    let app_resource = Node::new("resource")
        .attr("identifier", APP_RESOURCE)
        .attr("type", "webcontent")
        .attr(scorm_type, "asset")
        .children(files.iter().map(|f| Node::new("file").attr("href", f.clone())));
    let manifest = manifest
        .child(
            Node::new("metadata")
                .child(Node::new("schema").text("ADL SCORM"))
                .child(Node::new("schemaversion").text(schema_version)),
        )
        .child(
            Node::new("organizations")
                .attr("default", "org-gradlab")
                .child(organization),
        )
        .child(Node::new("resources").children(sco_resources).child(app_resource));
    let mut writer = Writer::new_with_indent(Vec::new(), b' ', 2);
    writer
        .write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))
        .and_then(|_| manifest.write(&mut writer))
        .map_err(|e| ManifestError::Write(e.to_string()))?;
    String::from_utf8(writer.into_inner()).map_err(|e| ManifestError::Write(e.to_string()))
}

/// What the structural check found wrong with a manifest.
#[derive(Debug, Error, PartialEq)]
pub enum CheckError {
    #[error("imsmanifest.xml is not well-formed XML: {0}")]
    NotWellFormed(String),
    #[error("identifier \"{0}\" is used twice")]
    DuplicateIdentifier(String),
    #[error("\"{0}\" refers to no identifier in the manifest")]
    DanglingReference(String),
    #[error("\"{0}\" is listed in the manifest but missing from the package")]
    MissingFile(String),
    #[error("\"{0}\" is not a relative path inside the package")]
    NotRelative(String),
    #[error("the manifest declares schema version \"{found}\", expected \"{expected}\"")]
    SchemaVersion { found: String, expected: String },
    #[error("the manifest has no SCO")]
    NoSco,
}

/// What a manifest that passed the check holds.
#[derive(Debug, Clone, PartialEq)]
pub struct ManifestSummary {
    /// Launch `href` plus `parameters` of each item, in order.
    pub launches: Vec<String>,
    pub titles: Vec<String>,
    pub sco_count: usize,
    /// `adlcp:masteryscore` (SCORM 1.2) or `imsss:minNormalizedMeasure` (2004), as written.
    pub pass_mark: Option<String>,
}

/// Checks a manifest against the package's files: well-formed XML, unique identifiers, every
/// `identifierref` resolved, every `href` a relative path to a file that is there, the schema
/// version of `version`, at least one SCO.
pub fn check_manifest(
    xml: &str,
    version: ScormVersion,
    files: &BTreeSet<String>,
) -> Result<ManifestSummary, CheckError> {
    let mut reader = Reader::from_str(xml);
    let mut identifiers = HashSet::new();
    let mut references = Vec::new();
    let mut hrefs = Vec::new();
    let mut items: Vec<(String, String)> = Vec::new();
    let mut resources: Vec<(String, String, bool)> = Vec::new();
    let mut titles = Vec::new();
    let mut open: Vec<String> = Vec::new();
    let mut schema_version = None;
    let mut pass_mark = None;
    let mut text = String::new();
    let scorm_type = scorm_type_attribute(version);
    loop {
        let event = reader
            .read_event()
            .map_err(|e| CheckError::NotWellFormed(e.to_string()))?;
        match event {
            Event::Start(ref e) | Event::Empty(ref e) => {
                let name = e.name().as_ref().to_owned();
                text.clear();
                let attribute = |wanted: &str| -> Result<Option<String>, CheckError> {
                    for a in e.attributes() {
                        let a = a.map_err(|e| CheckError::NotWellFormed(e.to_string()))?;
                        if a.key.as_ref() == wanted {
                            let value = a
                                .normalized_value(quick_xml::XmlVersion::Implicit1_0)
                                .map_err(|e| CheckError::NotWellFormed(e.to_string()))?;
                            return Ok(Some(value.into_owned()));
                        }
                    }
                    Ok(None)
                };
                if let Some(id) = attribute("identifier")? {
                    if !identifiers.insert(id.clone()) {
                        return Err(CheckError::DuplicateIdentifier(id));
                    }
                }
                if let Some(reference) = attribute("identifierref")? {
                    references.push(reference.clone());
                    if name == "item" {
                        items.push((reference, attribute("parameters")?.unwrap_or_default()));
                    }
                }
                if name == "organizations" {
                    if let Some(default) = attribute("default")? {
                        references.push(default);
                    }
                }
                if let Some(href) = attribute("href")? {
                    if name == "resource" {
                        let id = attribute("identifier")?.unwrap_or_default();
                        let sco = attribute(scorm_type)?.is_some_and(|t| t == "sco");
                        resources.push((id, href.clone(), sco));
                    }
                    hrefs.push(href);
                }
                if matches!(event, Event::Start(_)) {
                    open.push(name);
                }
            }
            Event::End(ref e) => {
                let name = e.name().as_ref().to_owned();
                match name.as_str() {
                    "schemaversion" => schema_version = Some(text.clone()),
                    "title" if open.iter().any(|o| o == "item") => titles.push(text.clone()),
                    "adlcp:masteryscore" | "imsss:minNormalizedMeasure" => pass_mark = Some(text.clone()),
                    _ => {}
                }
                text.clear();
                if open.pop().as_deref() != Some(name.as_str()) {
                    return Err(CheckError::NotWellFormed(format!("unexpected </{name}>")));
                }
            }
            Event::Text(ref t) => text.push_str(&t.xml10_content()),
            Event::GeneralRef(ref r) => {
                let reference = format!("&{};", r.xml10_content());
                let resolved =
                    quick_xml::escape::unescape(&reference).map_err(|e| CheckError::NotWellFormed(e.to_string()))?;
                text.push_str(&resolved);
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if let Some(unclosed) = open.pop() {
        return Err(CheckError::NotWellFormed(format!("<{unclosed}> is never closed")));
    }
    let expected = match version {
        ScormVersion::Scorm12 => "1.2",
        ScormVersion::Scorm2004 => "2004 4th Edition",
    };
    if schema_version.as_deref() != Some(expected) {
        return Err(CheckError::SchemaVersion {
            found: schema_version.unwrap_or_default(),
            expected: expected.into(),
        });
    }
    if let Some(dangling) = references.into_iter().find(|r| !identifiers.contains(r)) {
        return Err(CheckError::DanglingReference(dangling));
    }
    for href in &hrefs {
        let relative = !href.starts_with('/') && !href.contains("://") && !href.split('/').any(|part| part == "..");
        if !relative {
            return Err(CheckError::NotRelative(href.clone()));
        }
        if !files.contains(href) {
            return Err(CheckError::MissingFile(href.clone()));
        }
    }
    let sco_count = resources.iter().filter(|(_, _, sco)| *sco).count();
    if sco_count == 0 {
        return Err(CheckError::NoSco);
    }
    let launches = items
        .iter()
        .filter_map(|(reference, parameters)| {
            resources
                .iter()
                .find(|(id, _, _)| id == reference)
                .map(|(_, href, _)| format!("{href}{parameters}"))
        })
        .collect();
    Ok(ManifestSummary {
        launches,
        titles,
        sco_count,
        pass_mark,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files() -> BTreeSet<String> {
        ["index.html", "app-1.js", "app-1_bg.wasm", "style.css", "embed.js"]
            .into_iter()
            .map(String::from)
            .collect()
    }

    fn package_files() -> BTreeSet<String> {
        let mut all = files();
        all.insert("imsmanifest.xml".into());
        all
    }

    #[test]
    fn a_scorm_12_manifest_has_one_sco_per_experiment_and_the_quiz() {
        let options = PackageOptions::all(ScormVersion::Scorm12, Language::English, 80);
        let xml = manifest_xml(&options, &files()).unwrap();
        assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"));
        assert!(xml.contains("<schema>ADL SCORM</schema>"));
        assert!(xml.contains("<schemaversion>1.2</schemaversion>"));
        assert!(xml.contains("adlcp:scormtype=\"sco\""));
        assert!(!xml.contains("scormType"));
        assert!(xml.contains("<adlcp:masteryscore>80</adlcp:masteryscore>"));
        let summary = check_manifest(&xml, ScormVersion::Scorm12, &package_files()).unwrap();
        assert_eq!(summary.sco_count, SCENARIO_IDS.len() + 1);
        assert_eq!(summary.launches.len(), SCENARIO_IDS.len() + 1);
        assert_eq!(
            summary.launches[0],
            format!("index.html?embed=lab&scenario={}&hide=menu&lang=en", SCENARIO_IDS[0])
        );
        assert_eq!(summary.launches.last().unwrap(), "index.html?embed=quiz&lang=en");
        assert_eq!(summary.titles.last().unwrap(), "Quiz: gradient accumulation");
        assert_eq!(summary.pass_mark.as_deref(), Some("80"));
        for file in files() {
            assert!(xml.contains(&format!("<file href=\"{file}\"/>")), "{file} listed");
        }
    }

    #[test]
    fn a_scorm_2004_manifest_carries_the_pass_mark_as_an_objective() {
        let options = PackageOptions {
            version: ScormVersion::Scorm2004,
            language: Language::Spanish,
            scenarios: vec!["norms".into(), SANDBOX.into()],
            quiz: true,
            pass_mark: 70,
        };
        let xml = manifest_xml(&options, &files()).unwrap();
        assert!(xml.contains("<schemaversion>2004 4th Edition</schemaversion>"));
        assert!(xml.contains("adlcp:scormType=\"sco\""));
        assert!(xml.contains("xmlns:imsss=\"http://www.imsglobal.org/xsd/imsss\""));
        assert!(xml.contains("satisfiedByMeasure=\"true\""));
        assert!(!xml.contains("masteryscore"));
        let summary = check_manifest(&xml, ScormVersion::Scorm2004, &package_files()).unwrap();
        assert_eq!(summary.pass_mark.as_deref(), Some("0.7"));
        assert_eq!(summary.sco_count, 3);
        assert_eq!(
            summary.launches,
            vec![
                "index.html?embed=lab&scenario=norms&hide=menu&lang=es",
                "index.html?embed=lab&scenario=sandbox&hide=menu&lang=es",
                "index.html?embed=quiz&lang=es",
            ]
        );
        let spanish = Localizer::new(Language::Spanish).unwrap();
        assert_eq!(summary.titles[0], spanish.text("scenario-norms-title"));
        assert_eq!(summary.titles[2], spanish.text("quiz-title"));
        assert_ne!(
            summary.titles[2], "Quiz: gradient accumulation",
            "titles are in the package's language"
        );
    }

    #[test]
    fn the_quiz_can_be_left_out_and_bad_options_are_refused() {
        let mut options = PackageOptions::all(ScormVersion::Scorm12, Language::English, 80);
        options.quiz = false;
        let xml = manifest_xml(&options, &files()).unwrap();
        assert!(!xml.contains("embed=quiz") && !xml.contains("masteryscore"));
        assert_eq!(
            check_manifest(&xml, ScormVersion::Scorm12, &package_files())
                .unwrap()
                .sco_count,
            SCENARIO_IDS.len()
        );
        options.scenarios = vec!["nope".into()];
        let error = manifest_xml(&options, &files()).unwrap_err();
        assert!(error.to_string().contains("unknown Lab experiment \"nope\""), "{error}");
        assert!(
            error.to_string().contains("sandbox"),
            "the message lists the choices: {error}"
        );
        options.scenarios = vec!["norms".into(), "norms".into()];
        assert!(matches!(
            manifest_xml(&options, &files()),
            Err(ManifestError::DuplicateScenario(_))
        ));
        options.scenarios.clear();
        assert!(matches!(manifest_xml(&options, &files()), Err(ManifestError::Empty)));
        let mut options = PackageOptions::all(ScormVersion::Scorm2004, Language::English, 101);
        assert!(matches!(
            manifest_xml(&options, &files()),
            Err(ManifestError::PassMark(101))
        ));
        options.pass_mark = 0;
        assert!(manifest_xml(&options, &files()).is_ok());
    }

    #[test]
    fn titles_with_markup_characters_are_escaped() {
        let options = PackageOptions::all(ScormVersion::Scorm12, Language::English, 80);
        let mut files = files();
        files.insert("a&b <c>.js".into());
        let xml = manifest_xml(&options, &files).unwrap();
        assert!(xml.contains("a&amp;b &lt;c&gt;.js"));
        let mut present = files.clone();
        present.insert("imsmanifest.xml".into());
        check_manifest(&xml, ScormVersion::Scorm12, &present).unwrap();
    }

    #[test]
    fn the_check_finds_what_is_wrong() {
        let options = PackageOptions::all(ScormVersion::Scorm12, Language::English, 80);
        let xml = manifest_xml(&options, &files()).unwrap();
        let check = |xml: &str| check_manifest(xml, ScormVersion::Scorm12, &package_files());
        let mut missing = package_files();
        missing.remove("style.css");
        assert_eq!(
            check_manifest(&xml, ScormVersion::Scorm12, &missing),
            Err(CheckError::MissingFile("style.css".into()))
        );
        assert!(matches!(
            check(&xml.replace("</organizations>", "")),
            Err(CheckError::NotWellFormed(_))
        ));
        assert!(matches!(
            check(&xml.replace("</manifest>", "")),
            Err(CheckError::NotWellFormed(_))
        ));
        assert_eq!(
            check(&xml.replace("identifier=\"item-quiz\"", "identifier=\"res-quiz\"")),
            Err(CheckError::DuplicateIdentifier("res-quiz".into()))
        );
        assert_eq!(
            check(&xml.replace("identifierref=\"res-app\"", "identifierref=\"res-nothing\"")),
            Err(CheckError::DanglingReference("res-nothing".into()))
        );
        assert_eq!(
            check(&xml.replace("href=\"style.css\"", "href=\"/style.css\"")),
            Err(CheckError::NotRelative("/style.css".into()))
        );
        assert!(matches!(
            check(&xml.replace("<schemaversion>1.2", "<schemaversion>1.3")),
            Err(CheckError::SchemaVersion { .. })
        ));
        assert_eq!(
            check_manifest(&xml, ScormVersion::Scorm2004, &package_files()),
            Err(CheckError::SchemaVersion {
                found: "1.2".into(),
                expected: "2004 4th Edition".into()
            })
        );
        assert_eq!(
            check(&xml.replace("scormtype=\"sco\"", "scormtype=\"asset\"")),
            Err(CheckError::NoSco)
        );
    }
}

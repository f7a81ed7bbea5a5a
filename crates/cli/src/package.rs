//! `gradlab package scorm12|scorm2004`: the release build as a SCORM package for an LMS.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};

use gradlab_i18n::Language;
use gradlab_quiz::bank::QuestionBank;
use gradlab_scorm::manifest::PackageOptions;
use gradlab_scorm::package;
use gradlab_scorm::ScormVersion;

#[derive(Debug, Subcommand)]
pub enum PackageCommand {
    /// A SCORM 1.2 package (Moodle, Canvas, Open edX and most LMSs).
    Scorm12(PackageArgs),
    /// A SCORM 2004 4th edition package.
    Scorm2004(PackageArgs),
}

#[derive(Debug, Args)]
pub struct PackageArgs {
    /// The release build of the app (`trunk build --release`).
    #[arg(long, default_value = "dist")]
    dist: PathBuf,
    /// The zip to write.
    #[arg(long)]
    out: PathBuf,
    /// Language of the titles and of the app inside the LMS (`en`, `es`).
    #[arg(long, default_value = "en")]
    language: String,
    /// Lab experiments to include, one SCO each, comma-separated (default: every preset;
    /// `sandbox` is the free experiment).
    #[arg(long, value_delimiter = ',')]
    scenarios: Option<Vec<String>>,
    /// Leave the quiz out.
    #[arg(long)]
    no_quiz: bool,
    /// The quiz's pass mark in percent, written into the manifest (default: the quiz's own).
    #[arg(long)]
    pass_mark: Option<u8>,
}

pub fn run(command: PackageCommand, out: &mut dyn Write) -> Result<()> {
    let (version, args) = match command {
        PackageCommand::Scorm12(args) => (ScormVersion::Scorm12, args),
        PackageCommand::Scorm2004(args) => (ScormVersion::Scorm2004, args),
    };
    let language = Language::from_tag(&args.language).with_context(|| {
        let known: Vec<&str> = Language::ALL.iter().map(|l| l.tag()).collect();
        format!(
            "unknown language \"{}\"; choose one of {}",
            args.language,
            known.join(", ")
        )
    })?;
    let bank = QuestionBank::bundled_in(language).context("the bundled quiz does not load")?;
    let default_mark = (bank.pass_threshold * 100.0).round() as u8;
    let mut options = PackageOptions::all(version, language, args.pass_mark.unwrap_or(default_mark));
    if let Some(scenarios) = args.scenarios {
        options.scenarios = scenarios
            .into_iter()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
    }
    options.quiz = !args.no_quiz;
    let report = package::write(&args.dist, &args.out, &options)
        .with_context(|| format!("cannot build the {} package", version.key()))?;
    writeln!(
        out,
        "wrote {} ({} bytes, {} files, {} SCOs; manifest checked)",
        args.out.display(),
        report.bytes,
        report.files,
        report.summary.sco_count
    )?;
    for (title, launch) in report.summary.titles.iter().zip(&report.summary.launches) {
        writeln!(out, "  {title}: {launch}")?;
    }
    if let Some(mark) = report.summary.pass_mark {
        writeln!(out, "  quiz pass mark in the manifest: {mark}")?;
    }
    Ok(())
}

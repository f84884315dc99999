//! Finding the configuration that applies to each linted file: `--config
//! FILE` for all of them, or else the nearest `csa-lint.toml` /
//! `.csa-lint.toml` in the file's directory or above. Each directory is
//! looked at once per run.

use analyzer::config::{Config, Overrides, Settings, CONFIG_FILE_NAMES};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Settings and where they came from.
#[derive(Debug)]
pub struct Resolved {
    pub settings: Settings,
}

impl Resolved {
    /// `file` relative to the configuration's directory, for per-file
    /// ignores.
    pub fn relative(&self, file: &Path) -> PathBuf {
        let abs = absolute(file);
        abs.strip_prefix(&self.settings.root)
            .map(Path::to_path_buf)
            .unwrap_or(abs)
    }
}

pub struct ConfigResolver {
    overrides: Overrides,
    explicit: Option<Arc<Resolved>>,
    /// Directory to the configuration that applies to files in it.
    by_dir: HashMap<PathBuf, Option<Arc<Resolved>>>,
    defaults: Arc<Resolved>,
}

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// Reads and parses one configuration file; errors name the file, line,
/// column and key.
fn load(path: &Path, overrides: &Overrides) -> Result<Arc<Resolved>, String> {
    // Name the file as the user would: relative to the working directory
    // when it is below it.
    let shown = std::env::current_dir()
        .ok()
        .and_then(|cwd| path.strip_prefix(cwd).ok())
        .unwrap_or(path)
        .display()
        .to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{shown}: cannot read the configuration: {e}"))?;
    let config = Config::parse(&text, &absolute(path)).map_err(|e| format!("{shown}:{e}"))?;
    Ok(Arc::new(Resolved {
        settings: Settings::resolve(Some(&config), overrides),
    }))
}

impl ConfigResolver {
    pub fn new(explicit: Option<&Path>, overrides: Overrides) -> Result<ConfigResolver, String> {
        let explicit = explicit.map(|p| load(p, &overrides)).transpose()?;
        let defaults = Arc::new(Resolved {
            settings: Settings::resolve(None, &overrides),
        });
        Ok(ConfigResolver {
            overrides,
            explicit,
            by_dir: HashMap::new(),
            defaults,
        })
    }

    /// The settings for one file.
    pub fn for_file(&mut self, file: &Path) -> Result<Arc<Resolved>, String> {
        if let Some(e) = &self.explicit {
            return Ok(e.clone());
        }
        let abs = absolute(file);
        let mut chain = Vec::new();
        let mut found = None;
        let mut dir = abs.parent();
        while let Some(d) = dir {
            if let Some(cached) = self.by_dir.get(d) {
                found = cached.clone();
                break;
            }
            chain.push(d.to_path_buf());
            if let Some(path) = CONFIG_FILE_NAMES
                .iter()
                .map(|n| d.join(n))
                .find(|p| p.is_file())
            {
                found = Some(load(&path, &self.overrides)?);
                break;
            }
            dir = d.parent();
        }
        for d in chain {
            self.by_dir.insert(d, found.clone());
        }
        Ok(found.unwrap_or_else(|| self.defaults.clone()))
    }
}

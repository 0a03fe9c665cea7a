//! A project binary with a deliberately broken lexicon, `liar`, for `dev check-lexicon`'s test:
//! it reports every name it is asked about present without looking, lists `observeResourcesDeep`
//! among its read paths and declares its ownership marker there though no hook serves that
//! path, and announces ambient `widget`s it has no read for. Env `liar` declares it; env `site`
//! declares files (a conformant lexicon, checked by the same binary). It does not link the
//! `chant_e2e` library.

use chant::lexicon::files::FilesDeclaration;
use chant::lexicon::{
    BindError, Binding, BindingKey, Declaration, DeclaredEnv, EnvDeclaration, EnvLexicon, Registration,
};
use chant::observe::{
    ChannelKeys, DeclaredEntity, LastApply, Lexicon, LexiconError, Observation, Ownership, OwnershipChannel,
    PresentResource, ReadPath,
};
use serde::{Deserialize, Serialize};

/// The broken lexicon's name.
const LIAR: &str = "liar";

/// What `liar` declares: a list of names.
#[derive(Debug, Clone, PartialEq, Eq)]
struct LiarDeclaration(Vec<String>);

/// `liar` bound to an env.
struct LiarLexicon {
    declared: Vec<String>,
}

/// Its apply record (it never applies; the type is required).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct LiarRecord {
    env: String,
}

impl chant::ledger::Record for LiarRecord {
    const KIND: chant::ledger::RecordKind = chant::ledger::RecordKind::Apply;
    const NAME: &'static str = "liar apply";

    fn shard_key(&self, member: Option<&str>) -> Result<chant::ledger::ShardKey, chant::ledger::Error> {
        chant::ledger::ShardKey::apply(member, &self.env, LIAR)
    }
}

impl Lexicon for LiarLexicon {
    fn name(&self) -> &str {
        LIAR
    }

    /// The lie: everything asked about is present and owned, nothing is read.
    fn describe_resources(&self, declared: &[DeclaredEntity]) -> Result<Observation, LexiconError> {
        let mut o = Observation::new();
        for d in declared {
            o.insert_present(&d.name, PresentResource::new(Ownership::Owned).kind("widget"));
        }
        Ok(o)
    }

    fn read_paths(&self) -> &[ReadPath] {
        &[ReadPath::DescribeResources, ReadPath::ObserveResourcesDeep]
    }

    fn ownership_channel(&self) -> Option<OwnershipChannel> {
        let keys = ChannelKeys { managed_by: "managed-by".into(), stack: "stack".into(), env: "env".into() };
        Some(OwnershipChannel { keys, reads: vec![ReadPath::ObserveResourcesDeep] })
    }

    fn ambient_kinds(&self) -> Vec<String> {
        vec!["widget".into()]
    }
}

impl EnvLexicon for LiarLexicon {
    type Record = LiarRecord;

    fn declared_entities(&self) -> Result<Vec<DeclaredEntity>, LexiconError> {
        Ok(self.declared.iter().map(|n| DeclaredEntity::new(n).kind("widget")).collect())
    }

    fn last_apply(&self) -> LastApply {
        LastApply::none()
    }
}

impl Declaration for LiarDeclaration {
    const LEXICON: &'static str = LIAR;
    const BINDING_KEYS: &'static [BindingKey] = &[];
    type Lexicon = LiarLexicon;

    fn bind(&self, _: &Binding<'_>, _: Option<LiarRecord>) -> Result<LiarLexicon, BindError> {
        Ok(LiarLexicon { declared: self.0.clone() })
    }
}

chant::lexicon::inventory::submit! { Registration::of::<LiarDeclaration>() }

fn liar() -> EnvDeclaration {
    EnvDeclaration::new().with(LiarDeclaration(vec!["gadget".into(), "gizmo".into()]))
}

fn site() -> EnvDeclaration {
    EnvDeclaration::new().with(FilesDeclaration::new().file("app.conf", "port = 8080\n", 0o644))
}

chant::lexicon::inventory::submit! { DeclaredEnv::new("liar", liar) }
chant::lexicon::inventory::submit! { DeclaredEnv::new("site", site) }

chant::main!();

//! The redaction corpus: fake credentials in each provider's real format, generated here from a
//! fixed seed (so no credential-shaped literal sits in the repository), and innocent look-alikes.
//! Shared by `projections/tests/redact_corpus.rs` (the function) and `tests/redaction.rs` (the
//! binary). Every value is made up; most carry `FAKE` where their alphabet allows.
#![allow(dead_code)]

/// One secret: `line` is how it appears in the wild, with the secret at `{}`.
pub struct Secret {
    /// The `[REDACTED:<kind>]` expected.
    pub kind: &'static str,
    pub line: String,
    /// The secret itself (what must not survive, in any 12-character piece).
    pub secret: String,
    /// Whether the line still names a secret when URL-encoded into a query string (a token that
    /// is recognised by its own shape, not by the text around it).
    pub url: bool,
    /// Text after the secret that must survive (the prose after a cut-off key).
    pub keep: Option<&'static str>,
}

/// A small deterministic generator (xorshift), so the corpus is the same on every run.
pub struct Fake(u64);

pub const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
pub const UPPER_DIGITS: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
pub const LOWER_HEX: &str = "0123456789abcdef";
pub const B64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
pub const URLSAFE: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
pub const LETTERS: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

impl Fake {
    pub fn new(seed: u64) -> Fake {
        Fake(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    /// `n` characters of `alphabet`, starting with `FAKE` (or `fake`) when the alphabet has it.
    pub fn chars(&mut self, n: usize, alphabet: &str) -> String {
        let a: Vec<char> = alphabet.chars().collect();
        let mark = ["FAKE", "fake"]
            .into_iter()
            .find(|m| m.chars().all(|c| a.contains(&c)))
            .unwrap_or("");
        let mut s: String = mark.chars().take(n).collect();
        while s.len() < n {
            s.push(a[(self.next() % a.len() as u64) as usize]);
        }
        // Keep digits and both cases in every random tail, as real keys have.
        s
    }
    /// Like `chars` but without the `FAKE` mark (for strict alphabets such as hex).
    pub fn plain(&mut self, n: usize, alphabet: &str) -> String {
        let a: Vec<char> = alphabet.chars().collect();
        (0..n)
            .map(|_| a[(self.next() % a.len() as u64) as usize])
            .collect()
    }
    /// PEM base64 lines of 64 characters.
    pub fn pem_body(&mut self, lines: usize) -> String {
        let mut out = vec![format!("MIIE{}", self.chars(60, B64))];
        for _ in 1..lines {
            out.push(self.chars(64, B64));
        }
        out.push(format!("{}==", self.chars(22, B64)));
        out.join("\n")
    }
}

fn s(kind: &'static str, template: &str, secret: String, url: bool) -> Secret {
    Secret {
        kind,
        line: template.replace("{}", &secret),
        secret,
        url,
        keep: None,
    }
}

/// Every secret kind of the corpus.
pub fn secrets() -> Vec<Secret> {
    let mut f = Fake::new(20_261_122);
    let mut v = Vec::new();
    // Cloud.
    v.push(s(
        "aws-access-key",
        "aws_access_key_id = {}",
        format!("AKIA{}", f.chars(16, UPPER_DIGITS)),
        true,
    ));
    v.push(s(
        "aws-access-key",
        r#""AccessKeyId": "{}","#,
        format!("ASIA{}", f.chars(16, UPPER_DIGITS)),
        true,
    ));
    v.push(s(
        "aws-secret-key",
        "aws_secret_access_key = {}",
        f.chars(40, B64),
        false,
    ));
    v.push(s(
        "aws-secret-key",
        r#""SecretAccessKey": "{}","#,
        f.chars(40, B64),
        false,
    ));
    v.push(s(
        "aws-session-token",
        r#""SessionToken": "{}","#,
        format!("IQoJb3JpZ2luX2Vj{}", f.chars(320, B64)),
        false,
    ));
    v.push(s(
        "aws-session-token",
        "export AWS_SESSION_TOKEN={}",
        format!("FwoGZXIvYXdzE{}", f.chars(200, B64)),
        false,
    ));
    {
        // A GCP service-account key file, as `cat key.json` prints it: the key's newlines are
        // `\n` escapes in the file, so doubly escaped inside a hook payload.
        let body = f.pem_body(6);
        let file = serde_json::json!({
            "type": "service_account",
            "project_id": "fake-project-1234",
            "private_key_id": f.plain(40, LOWER_HEX),
            "private_key": format!("-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----\n"),
            "client_email": "fake-sa@fake-project-1234.iam.example.test",
            "client_id": "100000000000000000001",
        });
        v.push(Secret {
            kind: "private-key",
            line: serde_json::to_string_pretty(&file).unwrap(),
            secret: body,
            url: false,
            keep: Some("fake-sa@fake-project-1234"),
        });
    }
    v.push(s(
        "google-api-key",
        "GOOGLE_API_KEY={}",
        format!("AIza{}", f.chars(35, URLSAFE)),
        true,
    ));
    v.push(s(
        "google-oauth",
        r#"{"installed":{"client_id":"1234-fake.apps.example.test","client_secret":"{}"}}"#,
        format!("GOCSPX-{}", f.chars(28, URLSAFE)),
        true,
    ));
    v.push(s(
        "azure-storage-key",
        "DefaultEndpointsProtocol=https;AccountName=fakeacct;AccountKey={};EndpointSuffix=core.windows.example.test",
        format!("{}==", f.chars(86, B64)),
        false,
    ));
    v.push(s(
        "azure-sas",
        "https://fakeacct.blob.example.test/backups/db.tar?sv=2022-11-02&ss=b&srt=o&sp=r&se=2030-01-01T00:00:00Z&sig={}",
        format!("{}%3D", f.chars(43, ALNUM)),
        false,
    ));
    v.push(s(
        "azure-client-secret",
        "az login --service-principal -u 00000000-fake -p {} --tenant fake-tenant",
        format!("{}8Q~{}", f.chars(3, ALNUM), f.chars(34, ALNUM)),
        true,
    ));
    v.push(s(
        "digitalocean-token",
        "doctl auth init --access-token {}",
        format!("dop_v1_{}", f.plain(64, LOWER_HEX)),
        true,
    ));
    // VCS.
    v.push(s(
        "github-token",
        "GITHUB_TOKEN={}",
        format!("ghp_{}", f.chars(36, ALNUM)),
        true,
    ));
    v.push(s(
        "github-token",
        "gh auth status: logged in with token_{}",
        format!("ghp_{}", f.chars(36, ALNUM)),
        true,
    ));
    v.push(s(
        "github-token",
        "\u{1b}[32m{}\u{1b}[0m",
        format!("gho_{}", f.chars(36, ALNUM)),
        true,
    ));
    v.push(s(
        "github-token",
        "https://app.example.test/oauth/done?state=x&t%3D{}",
        format!("ghu_{}", f.chars(36, ALNUM)),
        true,
    ));
    v.push(s(
        "github-token",
        "installation token: {}",
        format!("ghs_{}", f.chars(36, ALNUM)),
        true,
    ));
    v.push(s(
        "github-token",
        r#"{"refresh_token":"{}"}"#,
        format!("ghr_{}", f.chars(76, ALNUM)),
        true,
    ));
    v.push(s(
        "github-token",
        "gh auth login --with-token <<< {}",
        format!("github_pat_{}_{}", f.chars(22, ALNUM), f.chars(59, ALNUM)),
        true,
    ));
    v.push(s(
        "gitlab-token",
        "curl --header \"PRIVATE-TOKEN: {}\" https://gitlab.example.test/api/v4/projects",
        format!("glpat-{}", f.chars(20, URLSAFE)),
        true,
    ));
    v.push(s(
        "gitlab-token",
        "gitlab-runner register --url https://gitlab.example.test --token {}",
        format!("glrt-t1_{}", f.chars(20, URLSAFE)),
        true,
    ));
    v.push(s(
        "gitlab-token",
        "gitlab-runner register --registration-token \"{}\"",
        format!("GR1348941{}", f.chars(20, URLSAFE)),
        true,
    ));
    v.push(s(
        "atlassian-token",
        "git clone https://fakeuser@bitbucket.example.test/team/repo.git # app password {}",
        format!("ATBB{}", f.chars(32, ALNUM)),
        true,
    ));
    // Chat.
    v.push(s(
        "slack-token",
        "SLACK_BOT_TOKEN={}",
        format!(
            "xoxb-{}-{}-{}",
            f.plain(12, "0123456789"),
            f.plain(13, "0123456789"),
            f.chars(24, ALNUM)
        ),
        true,
    ));
    v.push(s(
        "slack-token",
        "slack user token {}",
        format!(
            "xoxp-{}-{}-{}-{}",
            f.plain(12, "0123456789"),
            f.plain(12, "0123456789"),
            f.plain(13, "0123456789"),
            f.plain(32, LOWER_HEX)
        ),
        true,
    ));
    v.push(s(
        "slack-webhook",
        "curl -X POST -d '{\"text\":\"deploy done\"}' https://hooks.slack.com/services/{}",
        format!(
            "T{}/B{}/{}",
            f.chars(10, UPPER_DIGITS),
            f.chars(10, UPPER_DIGITS),
            f.chars(24, ALNUM)
        ),
        false,
    ));
    v.push(s(
        "discord-webhook",
        "DISCORD_WEBHOOK=https://discord.com/api/webhooks/{}",
        format!("{}/{}", f.plain(19, "0123456789"), f.chars(68, URLSAFE)),
        false,
    ));
    v.push(s(
        "authorization",
        "curl -H \"Authorization: Bot {}\" https://discord.example.test/api/v10/users/@me",
        format!(
            "MT{}.{}.{}",
            f.chars(24, URLSAFE),
            f.chars(6, URLSAFE),
            f.chars(38, URLSAFE)
        ),
        false,
    ));
    v.push(s(
        "secret",
        "DISCORD_BOT_TOKEN={}",
        format!(
            "MT{}.{}.{}",
            f.chars(24, URLSAFE),
            f.chars(6, URLSAFE),
            f.chars(38, URLSAFE)
        ),
        false,
    ));
    v.push(s(
        "telegram-bot-token",
        "curl https://api.telegram.example.test/bot{}/sendMessage -d chat_id=42",
        format!("{}:AA{}", f.plain(10, "0123456789"), f.chars(33, URLSAFE)),
        false,
    ));
    // Payment.
    v.push(s(
        "stripe-key",
        "STRIPE_SECRET_KEY={}",
        format!("sk_live_{}", f.chars(99, ALNUM)),
        true,
    ));
    v.push(s(
        "stripe-key",
        "stripe restricted key {}",
        format!("rk_live_{}", f.chars(99, ALNUM)),
        true,
    ));
    v.push(s(
        "stripe-key",
        "endpoint secret: {}",
        format!("whsec_{}", f.chars(32, ALNUM)),
        true,
    ));
    // Package registries.
    v.push(s(
        "npm-token",
        "//registry.example.test/:_authToken={}",
        format!("npm_{}", f.chars(36, ALNUM)),
        true,
    ));
    v.push(s(
        "pypi-token",
        "TWINE_PASSWORD={}",
        format!("pypi-AgEIcHlwaS5vcmc{}", f.chars(140, URLSAFE)),
        true,
    ));
    v.push(s(
        "docker-token",
        "echo {} | docker login -u fakeuser --password-stdin",
        format!("dckr_pat_{}", f.chars(27, URLSAFE)),
        true,
    ));
    v.push(s(
        "rubygems-key",
        "GEM_HOST_API_KEY={}",
        format!("rubygems_{}", f.plain(48, LOWER_HEX)),
        true,
    ));
    v.push(s(
        "crates-token",
        "cargo login {}",
        format!("cio{}", f.chars(32, ALNUM)),
        true,
    ));
    // AI providers.
    v.push(s(
        "openai-key",
        "OPENAI_API_KEY={}",
        format!(
            "sk-proj-{}T3BlbkFJ{}",
            f.chars(74, URLSAFE),
            f.chars(74, URLSAFE)
        ),
        true,
    ));
    v.push(s(
        "openai-key",
        "openai.api_key = \"{}\"",
        format!("sk-{}T3BlbkFJ{}", f.chars(20, ALNUM), f.chars(20, ALNUM)),
        true,
    ));
    v.push(s(
        "anthropic-key",
        "curl https://api.example.test/v1/messages -H \"x-api-key: {}\"",
        format!(
            "sk-ant-api03-{}-{}AA",
            f.chars(86, URLSAFE),
            f.chars(6, URLSAFE)
        ),
        true,
    ));
    v.push(s(
        "huggingface-token",
        "huggingface-cli login --token {}",
        format!("hf_{}", f.chars(34, LETTERS)),
        true,
    ));
    v.push(s(
        "google-api-key",
        r#"{"contents":[{"role":"user"}],"key":"{}"}"#,
        format!("AIza{}", f.chars(35, URLSAFE)),
        true,
    ));
    v.push(s(
        "groq-key",
        "GROQ_API_KEY={}",
        format!("gsk_{}", f.chars(52, ALNUM)),
        true,
    ));
    v.push(s(
        "replicate-token",
        "export REPLICATE_API_TOKEN={}",
        format!("r8_{}", f.chars(37, ALNUM)),
        true,
    ));
    v.push(s(
        "xai-key",
        "xai key {}",
        format!("xai-{}", f.chars(80, ALNUM)),
        true,
    ));
    v.push(s(
        "perplexity-key",
        "pplx {}",
        format!("pplx-{}", f.chars(48, ALNUM)),
        true,
    ));
    // Mail, SMS and other services.
    v.push(s(
        "sendgrid-key",
        "SENDGRID_API_KEY={}",
        format!("SG.{}.{}", f.chars(22, URLSAFE), f.chars(43, URLSAFE)),
        true,
    ));
    v.push(s(
        "twilio-key",
        "twilio api:core:keys:fetch --sid {}",
        format!("SK{}", f.plain(32, LOWER_HEX)),
        true,
    ));
    v.push(s(
        "twilio-key",
        "https://api.twilio.example.test/2010-04-01/Accounts/{}/Messages.json",
        format!("AC{}", f.plain(32, LOWER_HEX)),
        true,
    ));
    v.push(s(
        "mailgun-key",
        "mailgun: {}",
        format!("key-{}", f.plain(32, LOWER_HEX)),
        true,
    ));
    v.push(s(
        "vault-token",
        "VAULT_TOKEN={}",
        format!("hvs.{}", f.chars(90, URLSAFE)),
        true,
    ));
    v.push(s(
        "linear-key",
        "linear {}",
        format!("lin_api_{}", f.chars(40, ALNUM)),
        true,
    ));
    v.push(s(
        "shopify-token",
        "X-Shopify-Access-Token: {}",
        format!("shpat_{}", f.plain(32, LOWER_HEX)),
        true,
    ));
    v.push(s(
        "age-secret-key",
        "# created: 2026-01-01\n{}",
        format!(
            "AGE-SECRET-KEY-1{}",
            f.plain(58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L")
        ),
        true,
    ));
    v.push(s(
        "jwt",
        "Cookie: session={}; Path=/",
        format!(
            "eyJhbGciOiJIUzI1NiJ9.eyJ{}.{}",
            f.chars(40, URLSAFE),
            f.chars(43, URLSAFE)
        ),
        true,
    ));
    // Database URLs.
    v.push(s(
        "password",
        "DATABASE_URL=postgres://app:{}@db.internal:5432/app",
        f.chars(20, ALNUM),
        false,
    ));
    v.push(s(
        "password",
        "mysql -e 'select 1' mysql://root:{}@127.0.0.1:3306/shop",
        f.chars(16, ALNUM),
        false,
    ));
    v.push(s(
        "password",
        "MONGO_URI=\"mongodb+srv://admin:{}@cluster0.fake.example.test/db?retryWrites=true\"",
        f.chars(18, ALNUM),
        false,
    ));
    v.push(s(
        "password",
        "REDIS_URL=redis://:{}@cache:6379/0",
        f.chars(24, ALNUM),
        false,
    ));
    // Headers.
    v.push(s(
        "authorization",
        "curl -H 'Authorization: Bearer {}' https://api.example.test",
        f.chars(40, URLSAFE),
        false,
    ));
    v.push(s(
        "authorization",
        "Authorization: Basic {}",
        format!("{}=", f.chars(31, B64)),
        false,
    ));
    v.push(s(
        "secret",
        "curl -H \"x-api-key: {}\" https://api.example.test/v2",
        f.chars(32, ALNUM),
        false,
    ));
    // Assignments.
    v.push(s(
        "password",
        "password={}",
        format!("Tr0ub4dor{}", f.chars(6, ALNUM)),
        false,
    ));
    v.push(s(
        "secret",
        "SECRET_KEY={}",
        format!("django-insecure-{}", f.chars(40, ALNUM)),
        false,
    ));
    v.push(s(
        "secret",
        r#"{"api_key": "{}", "region": "eu"}"#,
        f.chars(32, ALNUM),
        false,
    ));
    v.push(s(
        "secret",
        "oauth:\n  client_id: fake-client\n  client_secret: {}\n",
        f.chars(32, URLSAFE),
        false,
    ));
    v.push(s(
        "password",
        "db:\n  user: app\n  password: \"{}\"\n",
        format!("{}!9", f.chars(12, ALNUM)),
        false,
    ));
    // Private keys.
    {
        let body = f.pem_body(8);
        v.push(Secret {
            kind: "private-key",
            line: format!("-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----"),
            secret: body,
            url: false,
            keep: None,
        });
        let body = f.pem_body(5);
        v.push(Secret {
            kind: "private-key",
            line: format!(
                "-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----\n"
            ),
            secret: body,
            url: false,
            keep: None,
        });
        let body = f.pem_body(4);
        v.push(Secret {
            kind: "private-key",
            line: format!(
                "-----BEGIN EC PRIVATE KEY-----\n{body}\n\nThe key above was cut off (output truncated), see the notes in docs/keys.md for how to rotate it."
            ),
            secret: body,
            url: false,
            keep: Some("The key above was cut off (output truncated), see the notes in docs/keys.md for how to rotate it."),
        });
        let body = f.pem_body(4);
        v.push(Secret {
            kind: "private-key",
            line: format!(
                "-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: FakePG v1\n\n{body}\n-----END PGP PRIVATE KEY BLOCK-----"
            ),
            secret: body,
            url: false,
            keep: None,
        });
    }
    // Passwords on command lines and in netrc files (issue 38).
    v.push(s(
        "password",
        "machine api.example.test login fake-user password {}",
        format!("{}!x", f.chars(14, ALNUM)),
        false,
    ));
    v.push(s(
        "password",
        "# ~/.netrc\nmachine git.example.test\n  login fake-user\n  password {}\n",
        f.chars(20, ALNUM),
        false,
    ));
    v.push(s(
        "password",
        "mysql -h db.example.test -u root -p{} app_db -e 'select 1'",
        format!("{}#9", f.chars(12, ALNUM)),
        false,
    ));
    v.push(s(
        "password",
        "mysqldump --user=root --password={} app_db > dump.sql",
        format!("{}9", f.chars(12, ALNUM)),
        false,
    ));
    v.push(s(
        "password",
        "sshpass -p '{}' ssh -p 2222 deploy@host.example.test uptime",
        format!("{}%7", f.chars(12, ALNUM)),
        false,
    ));
    {
        let public = [f.chars(64, B64), f.chars(20, B64)].join("\n");
        let private = [f.chars(64, B64), f.chars(64, B64), f.chars(24, B64)].join("\n");
        v.push(Secret {
            kind: "private-key",
            line: format!(
                "PuTTY-User-Key-File-3: ssh-rsa\nEncryption: none\nComment: fake-key-20261201\nPublic-Lines: 2\n{public}\nPrivate-Lines: 3\n{private}\nPrivate-MAC: {}\n",
                f.plain(64, LOWER_HEX)
            ),
            secret: private,
            url: false,
            keep: Some("Private-MAC: "),
        });
    }
    v
}

/// Innocent text that looks a little like a secret: never to be touched.
pub fn lookalikes() -> Vec<&'static str> {
    vec![
        "aws s3 cp ASIAPACIFICSALESREPORT2024.xlsx s3://reports/",
        "open http://localhost:3000?email=bob@example.com in the browser",
        "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 (HEAD -> main)",
        "session 0b7c6a52-3f0e-4c61-9a43-2f5d8e1c9a70 request req_011CUz8f7Nq2Lk9XyAbCdEfG",
        "<img src=\"data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==\">",
        "password_reset_url=https://app.example.test/account/reset",
        "token_count: 1234",
        "\"usage\": {\"input_tokens\": 1523, \"max_tokens\": 4096, \"cache_read_input_tokens\": 20480}",
        "pip install sk-learn-compatible-estimators-v2 && ls task-sk-list-items",
        "Set your API key in the settings page; the api key is never logged. Tokens expire after 90 days.",
        "curl -H \"Authorization: Bearer $GITHUB_TOKEN\" -H 'Authorization: Bearer <token>'",
        "env:\n  GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}\n  NPM_TOKEN: ${NPM_TOKEN}",
        "password = request.form.get(\"password\")\ntoken = get_token()\napi_key=api_key",
        "sort_key: created_at\n\"primaryKey\": \"id\"\nforeign_key = user_id",
        "{\"kty\": \"EC\", \"publicKey\": \"MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE4f2a9c1e8b7d\"}",
        "git clone ssh://git@github.com:22/org/repo.git; curl https://example.com:8443/path",
        "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUFAKE\n-----END CERTIFICATE-----\n-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEFAKE\n-----END PUBLIC KEY-----",
        "docker run -u 1000:1000 --rm alpine:3.20 id",
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: app-secret\n\"secret\": false, \"has_token\": true",
        "AKIA is the prefix of AWS access key ids; ghp_ starts a GitHub token; github_pat_ a fine-grained one",
        "\"tokenizer\": \"cl100k_base\", \"tokens\": [\"sk\", \"-\", \"learn\"]",
        "sha256:3b1f0c2e9a8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b",
        "PWD=/home/dev/acme-api\nOLDPWD=/home/dev\nnpm_config_cache=/tmp/npm-cache",
        "\u{1b}[32mok\u{1b}[0m 12 passed; \u{1b}[1;31m0 failed\u{1b}[0m",
        "from huggingface_hub import hf_hub_download; hf_hub_download(repo_id=\"gpt2\")",
        "Password: ******** (hidden)\npassword: \"\"\nsecret_key_base_length: 64",
        "mysql -u root -p app_db; mysql -p; sshpass -f ~/.pw ssh -p 2222 host; ssh -p 2222 host",
        "the login page asks for a password; login as admin, password reset by mail",
        "machine example.test login fake-user password $NETRC_PASSWORD",
    ]
}

/// The ways a line reaches the journal: as env text, inside a JSON hook payload (a Bash tool's
/// output, with escapes), inside a shell command in a payload, and URL-encoded in a query string.
pub fn contexts(line: &str, url: bool) -> Vec<(&'static str, String)> {
    let env = format!("# .env\nAPP_ENV=production\n{line}\nLOG_LEVEL=debug\n");
    let mut v = vec![
        ("env text", env.clone()),
        (
            "json payload",
            serde_json::json!({
                "session_id": "0b7c6a52-3f0e-4c61-9a43-2f5d8e1c9a70",
                "hook_event_name": "PostToolUse",
                "tool_name": "Bash",
                "tool_input": {"command": "cat .env", "description": "Show env"},
                "tool_response": {"stdout": env, "stderr": "", "interrupted": false},
                "tool_use_id": "toolu_01FAKE"
            })
            .to_string(),
        ),
        (
            "shell command",
            serde_json::json!({
                "session_id": "0b7c6a52-3f0e-4c61-9a43-2f5d8e1c9a70",
                "hook_event_name": "PreToolUse",
                "tool_name": "Bash",
                "tool_input": {"command": format!("set -e; printf '%s\\n' \"{line}\" >> /tmp/notes.txt && echo ok")},
            })
            .to_string(),
        ),
    ];
    if url {
        v.push((
            "url",
            format!(
                "GET https://app.example.test/debug?q={}&page=2 HTTP/1.1",
                percent_encode(line)
            ),
        ));
    }
    v
}

pub fn percent_encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Every 12-character piece of the secret's lines: none may survive masking.
pub fn pieces(secret: &str) -> Vec<&str> {
    let mut v = Vec::new();
    for line in secret.split('\n') {
        let idx: Vec<usize> = line.char_indices().map(|(i, _)| i).collect();
        for w in 0..idx.len().saturating_sub(11) {
            let end = idx.get(w + 12).copied().unwrap_or(line.len());
            v.push(&line[idx[w]..end]);
        }
    }
    v
}

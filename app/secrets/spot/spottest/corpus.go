// Package spottest is the corpus of secrets and look-alikes that spot is
// held to: the shapes the READMEs of the most used MCP servers tell people
// to paste (GitHub, Postgres, Slack, Brave Search, Sentry, Notion, Stripe,
// Supabase, Redis, MySQL, MongoDB, Atlassian, Linear, Cloudflare, Figma,
// Exa, Tavily, Firecrawl, Perplexity, mcp-remote, …), with made-up values.
// The detection's table test, the keyring's round trip and the tests that
// grep every output of the real binary all read it.
package spottest

import "strings"

// Where a shape is: a server's arguments, an env variable, a header or its
// URL.
const (
	Args   = "args"
	Env    = "env"
	Header = "header"
	URL    = "url"
)

// Shape is one way a server's configuration holds a secret, or something
// that looks like one and is not.
type Shape struct {
	// From is the server (or tool) whose README shows the shape.
	From string
	// Shape says what it is.
	Shape string
	// Kind is Args, Env, Header or URL.
	Kind string
	// Args is the command line (without the command) of an Args shape.
	Args []string
	// Name is the env variable's or the header's name.
	Name string
	// Value is the env variable's, the header's or the URL's value.
	Value string
	// Shown is how the configuration is shown: the arguments joined by
	// spaces, or the value, with each secret "(secret)". A look-alike is
	// shown as it is.
	Shown string
	// Secrets are the secret parts, in order; none for a look-alike.
	Secrets []string
}

// Secret reports whether the shape holds a secret.
func (s Shape) Secret() bool { return len(s.Secrets) > 0 }

// Made-up credentials in the formats of their providers.
const (
	GitHubPAT      = "ghp_R4nd0mT0k3nF0rT3st1ngAbCdEf01234567"
	GitHubFine     = "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEF0123456789ghijkl"
	SlackBot       = "xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
	Brave          = "BSAk3yF0rBr4v3S34rchT3st1ng0k"
	SentryToken    = "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"
	SentryDSNKey   = "e3b0c44298fc1c149afbf4c8996fb924"
	Notion         = "ntn_4432109876543abcdefGHIJKLmnopqrSTUVwxyz0123"
	StripeSecret   = "sk_test_51HqLyjWDarjtT1zdp7dcXQmFPwNQ3ekZmR2o1XpEvq0BEqm"
	StripeRestrict = "rk_live_51HqLyjWDarjtT1zdAbCdEfGhIjKl"
	Supabase       = "sbp_0123456789abcdef0123456789abcdef01234567"
	PostgresPW     = "pgS3cretPw2024"
	PostgresPW2    = "db-Pa55word-77"
	RedisPW        = "r3d1sPassw0rd"
	RedisPW2       = "rediss-Pw-8812"
	MySQLPass      = "my-sql-pass-42"
	MySQLPwd       = "mysqlPwd-77x"
	PGPassword     = "pgpass-99xQ"
	MongoPW        = "M0ngoPw-2024"
	MongoSecret    = "mdb-sa-cl13nt-s3cr3t-0123456789"
	Atlassian      = "ATATT3xFfGF0T4kenF0rJ1raAbCdEf0123456789xyz=1A2B3C4D"
	AtlassianPAT   = "NjQ5MzE2ODg4NjA0OkdhnQ2yH8dpFm1x9hXZQW7o"
	Linear         = "lin_api_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
	Cloudflare     = "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8L9z0"
	Figma          = "figd_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
	Exa            = "a1b2c3d4-e5f6-7890-abcd-ef1234567890"
	Tavily         = "tvly-dev-AbCdEfGhIjKlMnOp0123"
	Firecrawl      = "fc-0123456789abcdef0123456789abcdef"
	Perplexity     = "pplx-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
	OpenAI         = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
	Anthropic      = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
	JWT            = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJyb2xlIjoic2VydmljZV9yb2xlIn0.dGVzdHNpZ25hdHVyZWZvcnJvb3RrZWVwZXI"
	GoogleMaps     = "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"
	GitLab         = "glpat-AbCdEfGhIj0123456789"
	Context7       = "ctx7sk-0123abcd-4567-efgh-89ab-cdef01234567"
	Neon           = "napi_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfGhIjKlMn"
	MSSQLPassword  = "Str0ng!Passw0rd"
	AzureKey       = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
	RootPass       = "r00tPass-x"
	AdminPass      = "Adm1nPass"
	ClientSecret   = "cl1ent-s3cret-value"
	PwFlag         = "pw-S3cret-1"
	Hunter         = "hunter2hunter2"
	APIKeyHeader   = "xk-0123456789abcdefABCDEF"
	BasicPass      = "Sup3rS3cretPw"
	HeaderToken    = "s3cr3t-h34der-t0ken-99"
	GoDSNPass      = "g0-dsn-pass"
	AWSSecret      = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	AWSKeyID       = "AKIAIOSFODNN7EXAMPLE"
	SlackHook      = "XXXXXXXXXXXXXXXXXXXXXXXX"
	DiscordHook    = "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCdEfGhIjKlMnOpQrSt"
)

// Shapes is the corpus: every secret shape must be sealed and never shown,
// every look-alike shown as it is.
var Shapes = []Shape{
	// GitHub: the official server in Docker with its token in env, and
	// the remote server with a PAT in an Authorization header.
	{From: "GitHub", Shape: "token in env", Kind: Env, Name: "GITHUB_PERSONAL_ACCESS_TOKEN", Value: GitHubPAT, Shown: "(secret)", Secrets: []string{GitHubPAT}},
	{From: "GitHub", Shape: "remote: Authorization: Bearer PAT", Kind: Header, Name: "Authorization", Value: "Bearer " + GitHubFine, Shown: "Bearer (secret)", Secrets: []string{GitHubFine}},
	{From: "GitHub", Shape: "token inside an argument (token=…)", Kind: Args, Args: []string{"--config", "token=" + GitHubPAT + ",toolsets=repos"}, Shown: "--config token=(secret),toolsets=repos", Secrets: []string{GitHubPAT}},
	{From: "GitHub", Shape: "token as a URL's user", Kind: Args, Args: []string{"--repo", "https://" + GitHubPAT + "@github.com/me/app.git"}, Shown: "--repo https://(secret)@github.com/me/app.git", Secrets: []string{GitHubPAT}},
	// Postgres: the reference server takes a connection URL as its
	// argument; Postgres MCP Pro reads DATABASE_URI.
	{From: "Postgres", Shape: "password in a URL argument", Kind: Args, Args: []string{"-y", "@modelcontextprotocol/server-postgres", "postgresql://user:" + PostgresPW + "@localhost:5432/mydb"}, Shown: "-y @modelcontextprotocol/server-postgres postgresql://user:(secret)@localhost:5432/mydb", Secrets: []string{PostgresPW}},
	{From: "Postgres MCP Pro", Shape: "password in a URL in env", Kind: Env, Name: "DATABASE_URI", Value: "postgresql://username:" + PostgresPW2 + "@localhost:5432/dbname", Shown: "postgresql://username:(secret)@localhost:5432/dbname", Secrets: []string{PostgresPW2}},
	{From: "Postgres", Shape: "PGPASSWORD in env", Kind: Env, Name: "PGPASSWORD", Value: PGPassword, Shown: "(secret)", Secrets: []string{PGPassword}},
	{From: "Postgres (Docker)", Shape: "-e PGPASSWORD=… argument", Kind: Args, Args: []string{"run", "-i", "--rm", "-e", "PGPASSWORD=" + PGPassword, "mcp/postgres"}, Shown: "run -i --rm -e PGPASSWORD=(secret) mcp/postgres", Secrets: []string{PGPassword}},
	// Slack: a bot token in env.
	{From: "Slack", Shape: "bot token in env", Kind: Env, Name: "SLACK_BOT_TOKEN", Value: SlackBot, Shown: "(secret)", Secrets: []string{SlackBot}},
	// Brave Search: the key in env or as a flag.
	{From: "Brave Search", Shape: "key in env", Kind: Env, Name: "BRAVE_API_KEY", Value: Brave, Shown: "(secret)", Secrets: []string{Brave}},
	{From: "Brave Search", Shape: "--brave-api-key KEY", Kind: Args, Args: []string{"-y", "@brave/brave-search-mcp-server", "--brave-api-key", Brave, "--transport", "stdio"}, Shown: "-y @brave/brave-search-mcp-server --brave-api-key (secret) --transport stdio", Secrets: []string{Brave}},
	// Sentry: --access-token=…, and a DSN whose user is the key.
	{From: "Sentry", Shape: "--access-token=TOKEN", Kind: Args, Args: []string{"@sentry/mcp-server@latest", "--access-token=" + SentryToken, "--host=sentry.example.com"}, Shown: "@sentry/mcp-server@latest --access-token=(secret) --host=sentry.example.com", Secrets: []string{SentryToken}},
	{From: "Sentry", Shape: "DSN in env", Kind: Env, Name: "SENTRY_DSN", Value: "https://" + SentryDSNKey + "@o4505000000000000.ingest.us.sentry.io/4505000000000001", Shown: "https://(secret)@o4505000000000000.ingest.us.sentry.io/4505000000000001", Secrets: []string{SentryDSNKey}},
	// Notion: headers as JSON in env, or a token.
	{From: "Notion", Shape: "OPENAPI_MCP_HEADERS JSON with a Bearer token", Kind: Env, Name: "OPENAPI_MCP_HEADERS", Value: `{"Authorization": "Bearer ` + Notion + `", "Notion-Version": "2022-06-28" }`, Shown: `{"Authorization": "Bearer (secret)", "Notion-Version": "2022-06-28" }`, Secrets: []string{Notion}},
	{From: "Notion", Shape: "token in env", Kind: Env, Name: "NOTION_TOKEN", Value: Notion, Shown: "(secret)", Secrets: []string{Notion}},
	// Stripe: --api-key=…, and the remote server with a restricted key.
	{From: "Stripe", Shape: "--api-key=KEY", Kind: Args, Args: []string{"-y", "@stripe/mcp", "--tools=all", "--api-key=" + StripeSecret}, Shown: "-y @stripe/mcp --tools=all --api-key=(secret)", Secrets: []string{StripeSecret}},
	{From: "Stripe", Shape: "remote: Authorization: Bearer restricted key", Kind: Header, Name: "Authorization", Value: "Bearer " + StripeRestrict, Shown: "Bearer (secret)", Secrets: []string{StripeRestrict}},
	// Supabase: --access-token TOKEN (the project ref is not a secret).
	{From: "Supabase", Shape: "--access-token TOKEN", Kind: Args, Args: []string{"-y", "@supabase/mcp-server-supabase@latest", "--read-only", "--project-ref=abcdefghijklmnopqrst", "--access-token", Supabase}, Shown: "-y @supabase/mcp-server-supabase@latest --read-only --project-ref=abcdefghijklmnopqrst --access-token (secret)", Secrets: []string{Supabase}},
	{From: "Supabase", Shape: "service role JWT under a neutral name", Kind: Env, Name: "SUPABASE_SERVICE_ROLE", Value: JWT, Shown: "(secret)", Secrets: []string{JWT}},
	// Redis: a URL with a password, with an empty user, or with a user.
	{From: "Redis", Shape: "redis://:PASSWORD@host argument", Kind: Args, Args: []string{"-y", "@modelcontextprotocol/server-redis", "redis://:" + RedisPW + "@redis-12345.c1.us-east-1-2.ec2.cloud.redislabs.com:12345"}, Shown: "-y @modelcontextprotocol/server-redis redis://:(secret)@redis-12345.c1.us-east-1-2.ec2.cloud.redislabs.com:12345", Secrets: []string{RedisPW}},
	{From: "Redis (mcp-redis)", Shape: "--url rediss://user:pass@host", Kind: Args, Args: []string{"--from", "redis-mcp-server@latest", "redis-mcp-server", "--url", "rediss://default:" + RedisPW2 + "@localhost:6380/0"}, Shown: "--from redis-mcp-server@latest redis-mcp-server --url rediss://default:(secret)@localhost:6380/0", Secrets: []string{RedisPW2}},
	{From: "Redis (mcp-redis)", Shape: "REDIS_PWD in env", Kind: Env, Name: "REDIS_PWD", Value: RedisPW, Shown: "(secret)", Secrets: []string{RedisPW}},
	// MySQL: MYSQL_PASS (mcp-server-mysql), MYSQL_PWD (the client's), -u/-p.
	{From: "MySQL", Shape: "MYSQL_PASS in env", Kind: Env, Name: "MYSQL_PASS", Value: MySQLPass, Shown: "(secret)", Secrets: []string{MySQLPass}},
	{From: "MySQL", Shape: "MYSQL_PWD in env", Kind: Env, Name: "MYSQL_PWD", Value: MySQLPwd, Shown: "(secret)", Secrets: []string{MySQLPwd}},
	{From: "MySQL", Shape: "-p PASSWORD after -u USER", Kind: Args, Args: []string{"mysql-mcp", "-h", "127.0.0.1", "-u", "root", "-p", RootPass, "mydb"}, Shown: "mysql-mcp -h 127.0.0.1 -u root -p (secret) mydb", Secrets: []string{RootPass}},
	{From: "MySQL", Shape: "Go DSN user:pass@tcp(host)", Kind: Env, Name: "MYSQL_DSN", Value: "root:" + GoDSNPass + "@tcp(127.0.0.1:3306)/shop", Shown: "root:(secret)@tcp(127.0.0.1:3306)/shop", Secrets: []string{GoDSNPass}},
	// MongoDB: a connection string flag, the Atlas API client secret.
	{From: "MongoDB", Shape: "--connectionString mongodb+srv://user:pass@…", Kind: Args, Args: []string{"-y", "mongodb-mcp-server", "--connectionString", "mongodb+srv://app_user:" + MongoPW + "@cluster0.ab1cd.mongodb.net/sample", "--readOnly"}, Shown: "-y mongodb-mcp-server --connectionString mongodb+srv://app_user:(secret)@cluster0.ab1cd.mongodb.net/sample --readOnly", Secrets: []string{MongoPW}},
	{From: "MongoDB", Shape: "--apiClientSecret SECRET", Kind: Args, Args: []string{"-y", "mongodb-mcp-server", "--apiClientId", "mdb_sa_id_0123456789", "--apiClientSecret", MongoSecret}, Shown: "-y mongodb-mcp-server --apiClientId mdb_sa_id_0123456789 --apiClientSecret (secret)", Secrets: []string{MongoSecret}},
	{From: "MongoDB", Shape: "client secret in env", Kind: Env, Name: "MDB_MCP_API_CLIENT_SECRET", Value: MongoSecret, Shown: "(secret)", Secrets: []string{MongoSecret}},
	// Atlassian (mcp-atlassian): API tokens in env and as flags.
	{From: "Atlassian", Shape: "API token in env", Kind: Env, Name: "JIRA_API_TOKEN", Value: Atlassian, Shown: "(secret)", Secrets: []string{Atlassian}},
	{From: "Atlassian", Shape: "--confluence-personal-token TOKEN", Kind: Args, Args: []string{"mcp-atlassian", "--confluence-url=https://confluence.example.com", "--confluence-personal-token", AtlassianPAT}, Shown: "mcp-atlassian --confluence-url=https://confluence.example.com --confluence-personal-token (secret)", Secrets: []string{AtlassianPAT}},
	// Linear through mcp-remote with a key in a header argument.
	{From: "Linear (mcp-remote)", Shape: `--header "Authorization: Bearer KEY"`, Kind: Args, Args: []string{"-y", "mcp-remote", "https://mcp.linear.app/mcp", "--header", "Authorization: Bearer " + Linear}, Shown: "-y mcp-remote https://mcp.linear.app/mcp --header Authorization: Bearer (secret)", Secrets: []string{Linear}},
	// mcp-remote: the header written without a space, an API-key header,
	// the Windows workaround with the value in env.
	{From: "mcp-remote", Shape: "Authorization:Bearer sk-… (no space)", Kind: Args, Args: []string{"mcp-remote", "https://remote.mcp.example.com/sse", "--header", "Authorization:Bearer " + OpenAI}, Shown: "mcp-remote https://remote.mcp.example.com/sse --header Authorization:Bearer (secret)", Secrets: []string{OpenAI}},
	{From: "mcp-remote", Shape: `--header "X-API-Key: KEY"`, Kind: Args, Args: []string{"mcp-remote", "https://remote.mcp.example.com/mcp", "--header", "X-API-Key: " + APIKeyHeader}, Shown: "mcp-remote https://remote.mcp.example.com/mcp --header X-API-Key: (secret)", Secrets: []string{APIKeyHeader}},
	{From: "mcp-remote", Shape: "AUTH_HEADER=Bearer … in env", Kind: Env, Name: "AUTH_HEADER", Value: "Bearer " + HeaderToken, Shown: "Bearer (secret)", Secrets: []string{HeaderToken}},
	{From: "mcp-remote", Shape: "--header=Authorization: Bearer …", Kind: Args, Args: []string{"mcp-remote", "https://remote.mcp.example.com/mcp", "--header=Authorization: Bearer " + HeaderToken}, Shown: "mcp-remote https://remote.mcp.example.com/mcp --header=Authorization: Bearer (secret)", Secrets: []string{HeaderToken}},
	// Cloudflare: an API token with no prefix, by its name.
	{From: "Cloudflare", Shape: "API token in env", Kind: Env, Name: "CLOUDFLARE_API_TOKEN", Value: Cloudflare, Shown: "(secret)", Secrets: []string{Cloudflare}},
	// Figma (Framelink): --figma-api-key=KEY.
	{From: "Figma", Shape: "--figma-api-key=KEY", Kind: Args, Args: []string{"-y", "figma-developer-mcp", "--figma-api-key=" + Figma, "--stdio"}, Shown: "-y figma-developer-mcp --figma-api-key=(secret) --stdio", Secrets: []string{Figma}},
	// Exa, Tavily: the key in the remote URL's query, camelCase.
	{From: "Exa", Shape: "?exaApiKey=KEY", Kind: URL, Value: "https://mcp.exa.ai/mcp?exaApiKey=" + Exa, Shown: "https://mcp.exa.ai/mcp?exaApiKey=(secret)", Secrets: []string{Exa}},
	{From: "Exa", Shape: "key in env", Kind: Env, Name: "EXA_API_KEY", Value: Exa, Shown: "(secret)", Secrets: []string{Exa}},
	{From: "Tavily", Shape: "?tavilyApiKey=KEY", Kind: URL, Value: "https://mcp.tavily.com/mcp/?tavilyApiKey=" + Tavily, Shown: "https://mcp.tavily.com/mcp/?tavilyApiKey=(secret)", Secrets: []string{Tavily}},
	{From: "Tavily", Shape: "key in env", Kind: Env, Name: "TAVILY_API_KEY", Value: Tavily, Shown: "(secret)", Secrets: []string{Tavily}},
	// Firecrawl: the key in the remote URL's path.
	{From: "Firecrawl", Shape: "key in the URL's path", Kind: URL, Value: "https://mcp.firecrawl.dev/" + Firecrawl + "/v2/mcp", Shown: "https://mcp.firecrawl.dev/(secret)/v2/mcp", Secrets: []string{Firecrawl}},
	{From: "Firecrawl", Shape: "key in env", Kind: Env, Name: "FIRECRAWL_API_KEY", Value: Firecrawl, Shown: "(secret)", Secrets: []string{Firecrawl}},
	// Perplexity.
	{From: "Perplexity", Shape: "key in env", Kind: Env, Name: "PERPLEXITY_API_KEY", Value: Perplexity, Shown: "(secret)", Secrets: []string{Perplexity}},
	// Remote servers behind basic authentication, and their kin.
	{From: "self-hosted remote", Shape: "https://user:pass@host as the server's URL", Kind: URL, Value: "https://admin:" + BasicPass + "@mcp.internal.example.com/mcp", Shown: "https://admin:(secret)@mcp.internal.example.com/mcp", Secrets: []string{BasicPass}},
	{From: "self-hosted remote", Shape: "URL userinfo and a query token", Kind: URL, Value: "https://bot:" + BasicPass + "@mcp.example.com/mcp?token=" + HeaderToken + "&region=eu", Shown: "https://bot:(secret)@mcp.example.com/mcp?token=(secret)&region=eu", Secrets: []string{BasicPass, HeaderToken}},
	{From: "self-hosted remote", Shape: "X-API-Key header", Kind: Header, Name: "X-API-Key", Value: APIKeyHeader, Shown: "(secret)", Secrets: []string{APIKeyHeader}},
	{From: "self-hosted remote", Shape: "Basic credentials in Authorization", Kind: Header, Name: "Authorization", Value: "Basic YWRtaW46U3VwM3JTM2NyZXRQdw==", Shown: "Basic (secret)", Secrets: []string{"YWRtaW46U3VwM3JTM2NyZXRQdw=="}},
	// Password flags.
	{From: "CLI servers", Shape: "--password X", Kind: Args, Args: []string{"db-mcp", "--user", "app", "--password", Hunter}, Shown: "db-mcp --user app --password (secret)", Secrets: []string{Hunter}},
	{From: "CLI servers", Shape: "--pw=X", Kind: Args, Args: []string{"vault-mcp", "--pw=" + PwFlag}, Shown: "vault-mcp --pw=(secret)", Secrets: []string{PwFlag}},
	{From: "CLI servers", Shape: "--auth user:pass", Kind: Args, Args: []string{"jenkins-mcp", "--url", "https://ci.example.com", "--auth", "admin:" + AdminPass}, Shown: "jenkins-mcp --url https://ci.example.com --auth admin:(secret)", Secrets: []string{AdminPass}},
	{From: "CLI servers", Shape: "--client-secret X", Kind: Args, Args: []string{"oauth-mcp", "--client-id", "my-app", "--client-secret", ClientSecret}, Shown: "oauth-mcp --client-id my-app --client-secret (secret)", Secrets: []string{ClientSecret}},
	// Connection strings under neutral names.
	{From: "SQL Server", Shape: "connection string with Password=", Kind: Env, Name: "MSSQL_CONNECTION_STRING", Value: "Server=tcp:db.example.database.windows.net,1433;Database=shop;User ID=app;Password=" + MSSQLPassword + ";Encrypt=true;", Shown: "Server=tcp:db.example.database.windows.net,1433;Database=shop;User ID=app;Password=(secret);Encrypt=true;", Secrets: []string{MSSQLPassword}},
	{From: "Azure Storage", Shape: "connection string with AccountKey=", Kind: Env, Name: "AZURE_STORAGE_CONNECTION_STRING", Value: "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + AzureKey + ";EndpointSuffix=core.windows.net", Shown: "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=(secret);EndpointSuffix=core.windows.net", Secrets: []string{AzureKey}},
	// Model providers' keys and other well-known formats.
	{From: "OpenAI-backed servers", Shape: "--api-key KEY", Kind: Args, Args: []string{"-y", "some-openai-mcp", "--api-key", OpenAI}, Shown: "-y some-openai-mcp --api-key (secret)", Secrets: []string{OpenAI}},
	{From: "Anthropic-backed servers", Shape: "known prefix under a neutral name", Kind: Env, Name: "LLM", Value: Anthropic, Shown: "(secret)", Secrets: []string{Anthropic}},
	{From: "Google Maps", Shape: "key in env", Kind: Env, Name: "GOOGLE_MAPS_API_KEY", Value: GoogleMaps, Shown: "(secret)", Secrets: []string{GoogleMaps}},
	{From: "GitLab", Shape: "token in env", Kind: Env, Name: "GITLAB_PERSONAL_ACCESS_TOKEN", Value: GitLab, Shown: "(secret)", Secrets: []string{GitLab}},
	{From: "Context7", Shape: "--api-key KEY", Kind: Args, Args: []string{"-y", "@upstash/context7-mcp", "--api-key", Context7}, Shown: "-y @upstash/context7-mcp --api-key (secret)", Secrets: []string{Context7}},
	{From: "Context7", Shape: "CONTEXT7_API_KEY header", Kind: Header, Name: "CONTEXT7_API_KEY", Value: Context7, Shown: "(secret)", Secrets: []string{Context7}},
	{From: "shell wrappers", Shape: "a whole command line in one argument (sh -c)", Kind: Args, Args: []string{"-c", "exec npx -y @org/mcp --api-key " + OpenAI + " --stdio"}, Shown: "-c exec npx -y @org/mcp --api-key (secret) --stdio", Secrets: []string{OpenAI}},
	{From: "AWS (awslabs)", Shape: "secret access key in env", Kind: Env, Name: "AWS_SECRET_ACCESS_KEY", Value: AWSSecret, Shown: "(secret)", Secrets: []string{AWSSecret}},
	{From: "AWS (awslabs)", Shape: "access key ID, by its format", Kind: Env, Name: "AWS_ACCESS_KEY_ID", Value: AWSKeyID, Shown: "(secret)", Secrets: []string{AWSKeyID}},
	{From: "GitLab", Shape: "Private-Token header", Kind: Header, Name: "Private-Token", Value: GitLab, Shown: "(secret)", Secrets: []string{GitLab}},
	{From: "remote servers", Shape: "Cookie header", Kind: Header, Name: "Cookie", Value: "session=" + HeaderToken + "; theme=dark", Shown: "(secret)", Secrets: []string{"session=" + HeaderToken + "; theme=dark"}},
	{From: "Slack", Shape: "webhook URL in env", Kind: Env, Name: "SLACK_WEBHOOK_URL", Value: "https://hooks.slack.com/services/T00000000/B00000000/" + SlackHook, Shown: "https://hooks.slack.com/services/T00000000/B00000000/(secret)", Secrets: []string{SlackHook}},
	{From: "Discord", Shape: "webhook URL as an argument", Kind: Args, Args: []string{"--webhook", "https://discord.com/api/webhooks/1234567890123456789/" + DiscordHook}, Shown: "--webhook https://discord.com/api/webhooks/1234567890123456789/(secret)", Secrets: []string{DiscordHook}},
	{From: "Neon", Shape: "key as a positional argument", Kind: Args, Args: []string{"-y", "@neondatabase/mcp-server-neon", "start", Neon}, Shown: "-y @neondatabase/mcp-server-neon start (secret)", Secrets: []string{Neon}},

	// Look-alikes: they stay as they are.
	{From: "Filesystem", Shape: "folders", Kind: Args, Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/Users/username/Desktop", "/path/to/other/allowed/dir"}},
	{From: "Git", Shape: "a repository flag", Kind: Args, Args: []string{"mcp-server-git", "--repository", "/home/me/src/project"}},
	{From: "Playwright", Shape: "port, browser, viewport", Kind: Args, Args: []string{"@playwright/mcp@latest", "--port", "8931", "--browser", "chrome", "--viewport-size", "1280,720"}},
	{From: "Time", Shape: "a time zone", Kind: Args, Args: []string{"mcp-server-time", "--local-timezone=America/New_York"}},
	{From: "Fetch", Shape: "a user agent", Kind: Args, Args: []string{"mcp-server-fetch", "--user-agent=Mozilla/5.0 (compatible; MCPBot/1.0)", "--ignore-robots-txt"}},
	{From: "GitHub (Docker)", Shape: "-e NAME without a value", Kind: Args, Args: []string{"run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"}},
	{From: "Docker", Shape: "an image digest", Kind: Args, Args: []string{"run", "-i", "--rm", "mcp/postgres@sha256:4b825dc642cb6eb9a060e54bf8d69288fbee49044b825dc642cb6eb9a060e54b", "postgresql://host.docker.internal:5432/mydb"}},
	{From: "Docker", Shape: "-u UID then -p PORT:PORT", Kind: Args, Args: []string{"run", "-u", "1000:1000", "-p", "8080:8080", "-p", "127.0.0.1:5432:5432/tcp", "mcp/fetch"}},
	{From: "Postgres", Shape: "a URL with no password", Kind: Args, Args: []string{"-y", "@modelcontextprotocol/server-postgres", "postgresql://localhost/mydb"}},
	{From: "Redis", Shape: "a URL with no password", Kind: Args, Args: []string{"-y", "@modelcontextprotocol/server-redis", "redis://localhost:6379"}},
	{From: "model servers", Shape: "a model name", Kind: Args, Args: []string{"--model", "claude-3-5-sonnet-20241022", "--max-tokens", "4096", "--tokens", "5"}},
	{From: "Git", Shape: "a commit hash", Kind: Args, Args: []string{"--ref", "4b825dc642cb6eb9a060e54bf8d69288fbee4904"}},
	{From: "npm", Shape: "versions", Kind: Args, Args: []string{"-y", "@modelcontextprotocol/server-github@2025.4.8", "mcp-server-fetch==2025.4.7", "v0.6.2", "npm:@scope/pkg@1.0.0"}},
	{From: "SSH", Shape: "key files", Kind: Args, Args: []string{"--private-key", "~/.ssh/id_ed25519", "--key-file", "k.pem", "--api-key-env", "OPENAI_API_KEY"}},
	{From: "mcp-remote", Shape: "a header from a variable", Kind: Args, Args: []string{"mcp-remote", "https://remote.mcp.example.com/sse", "--header", "Authorization: Bearer ${AUTH_TOKEN}"}},
	{From: "mcp-remote", Shape: "Authorization:${AUTH_HEADER}", Kind: Args, Args: []string{"mcp-remote", "https://remote.mcp.example.com/sse", "--header", "Authorization:${AUTH_HEADER}"}},
	{From: "Python servers", Shape: "python -u, then -p PORT", Kind: Args, Args: []string{"-u", "server.py", "-p", "8080"}},
	{From: "auth modes", Shape: "--auth oauth / none", Kind: Args, Args: []string{"--auth", "oauth", "--auth-type", "none"}},
	{From: "Atlassian", Shape: "a site URL flag", Kind: Args, Args: []string{"--jira-url", "https://your-company.atlassian.net", "--jira-username", "your.email@company.com"}},
	{From: "Slack", Shape: "team ID", Kind: Env, Name: "SLACK_TEAM_ID", Value: "T01234567"},
	{From: "Slack", Shape: "channel IDs", Kind: Env, Name: "SLACK_CHANNEL_IDS", Value: "C01234567, C76543210"},
	{From: "Cloudflare", Shape: "account ID (32 hex)", Kind: Env, Name: "CLOUDFLARE_ACCOUNT_ID", Value: "023e105f4ecef8ad9ca31a8372d0c353"},
	{From: "Notion", Shape: "a database ID", Kind: Env, Name: "NOTION_DATABASE_ID", Value: "a8aec43c-6f00-4a2a-9d1f-2c8e5a3b7d10"},
	{From: "GitLab", Shape: "API URL", Kind: Env, Name: "GITLAB_API_URL", Value: "https://gitlab.com/api/v4"},
	{From: "Firecrawl", Shape: "self-hosted API URL", Kind: Env, Name: "FIRECRAWL_API_URL", Value: "https://firecrawl.mycompany.com"},
	{From: "Sentry", Shape: "host", Kind: Env, Name: "SENTRY_HOST", Value: "sentry.example.com"},
	{From: "Atlassian", Shape: "user name", Kind: Env, Name: "JIRA_USERNAME", Value: "your.email@company.com"},
	{From: "Memory", Shape: "a file path", Kind: Env, Name: "MEMORY_FILE_PATH", Value: "/path/to/custom/memory.json"},
	{From: "Google", Shape: "credentials file", Kind: Env, Name: "GOOGLE_APPLICATION_CREDENTIALS", Value: "/home/me/.config/gcloud/application_default_credentials.json"},
	{From: "MySQL", Shape: "host, port, user", Kind: Env, Name: "MYSQL_PORT", Value: "3306"},
	{From: "model servers", Shape: "a model name in env", Kind: Env, Name: "OPENAI_MODEL", Value: "gpt-4o-mini"},
	{From: "model servers", Shape: "a token budget", Kind: Env, Name: "MAX_TOKENS", Value: "4096"},
	{From: "auth modes", Shape: "a switch", Kind: Env, Name: "AUTH_ENABLED", Value: "true"},
	{From: "auth modes", Shape: "a sign-in URL", Kind: Env, Name: "AUTH_URL", Value: "https://login.example.com/oauth2/authorize"},
	{From: "AWS", Shape: "region and profile", Kind: Env, Name: "AWS_PROFILE", Value: "default"},
	{From: "GitHub", Shape: "a variable", Kind: Env, Name: "GITHUB_TOKEN", Value: "${GITHUB_TOKEN}"},
	{From: "shells", Shape: "the working folder", Kind: Env, Name: "PWD", Value: "/home/me/src"},
	{From: "Linear", Shape: "a remote URL", Kind: URL, Value: "https://mcp.linear.app/sse"},
	{From: "Atlassian", Shape: "a remote URL", Kind: URL, Value: "https://mcp.atlassian.com/v1/sse"},
	{From: "GitHub", Shape: "a remote URL", Kind: URL, Value: "https://api.githubcopilot.com/mcp/"},
	{From: "Supabase", Shape: "project ref and read-only in the query", Kind: URL, Value: "https://mcp.supabase.com/mcp?project_ref=abcdefghijklmnopqrst&read_only=true"},
	{From: "Figma", Shape: "the desktop app's local server", Kind: URL, Value: "http://127.0.0.1:3845/mcp"},
	{From: "Firecrawl", Shape: "the keyless URL", Kind: URL, Value: "https://mcp.firecrawl.dev/v2/mcp"},
	{From: "Cloudflare", Shape: "a remote URL", Kind: URL, Value: "https://observability.mcp.cloudflare.com/sse"},
	{From: "docs", Shape: "prose that names an auth scheme", Kind: Env, Name: "SERVER_DESCRIPTION", Value: "Basic authentication or a Bearer token, see the docs"},
	{From: "bots", Shape: "a mode word after a scheme's name", Kind: Env, Name: "MODE", Value: "bot mode"},
	{From: "Node servers", Shape: "NODE_OPTIONS", Kind: Env, Name: "NODE_OPTIONS", Value: "--max-old-space-size=4096"},
	{From: "Puppeteer", Shape: "launch options as JSON", Kind: Env, Name: "PUPPETEER_LAUNCH_OPTIONS", Value: `{"headless": true, "args": ["--no-sandbox"]}`},
	{From: "debug", Shape: "DEBUG patterns", Kind: Env, Name: "DEBUG", Value: "mcp:*"},
	{From: "SSH", Shape: "a public key", Kind: Env, Name: "PUBLIC_KEY", Value: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA me@laptop"},
	{From: "servers with sessions", Shape: "a session ID (hex)", Kind: Args, Args: []string{"--session-id", "0f1e2d3c4b5a69788796a5b4c3d2e1f0"}},
	{From: "REST wrappers", Shape: "a base URL with a version query", Kind: Args, Args: []string{"--base-url", "https://api.example.com/v1?version=2024-01-01&format=json"}},
	{From: "Notion", Shape: "version header", Kind: Header, Name: "Notion-Version", Value: "2022-06-28"},
	{From: "remote servers", Shape: "Accept header", Kind: Header, Name: "Accept", Value: "application/json, text/event-stream"},
	{From: "VS Code", Shape: "Authorization from an input", Kind: Header, Name: "Authorization", Value: "Bearer ${input:github_mcp_pat}"},
}

// Counts are the corpus's numbers: shapes that hold a secret, and
// look-alikes.
func Counts() (secrets, lookalikes int) {
	for _, s := range Shapes {
		if s.Secret() {
			secrets++
		} else {
			lookalikes++
		}
	}
	return secrets, lookalikes
}

// Input is how the shape is given: the arguments joined by spaces, or the
// value.
func (s Shape) Input() string {
	if s.Kind == Args {
		return strings.Join(s.Args, " ")
	}
	return s.Value
}

// WantShown is how the shape must be shown: Shown, or for a look-alike
// the input itself.
func (s Shape) WantShown() string {
	if !s.Secret() {
		return s.Input()
	}
	return s.Shown
}

package main

// Server is one npm package to record, pinned to an exact version, with the
// dummy credentials it needs to start. None of them is real; the servers run
// in a network namespace with only loopback, so nothing reaches a network.
type Server struct {
	Package string
	Version string
	// Bin names the package's bin under node_modules/.bin; empty means the
	// only one, or the one named like the package.
	Bin string
	// Script, when set, is a file in the install directory run with node
	// instead of a bin (a server built on a framework package).
	Script string
	Args   []string
	// Env adds dummy credentials; "$ROOT" is replaced by the scratch root,
	// as it is in Args.
	Env map[string]string
}

// Probe is one call of a real tool that is expected to fail.
type Probe struct {
	Tool string
	Args map[string]any
}

func (s Server) spec() string { return s.Package + "@" + s.Version }

// missing is a path that does not exist, inside the directory that servers
// with a sandbox are allowed to read.
const missing = "$ROOT/empty/missing.txt"

var servers = []Server{
	{Package: "@modelcontextprotocol/server-everything", Version: "2026.8.31", Args: []string{"stdio"}},
	{Package: "@modelcontextprotocol/server-filesystem", Version: "2026.8.31", Args: []string{"$ROOT/empty"}},
	{Package: "@modelcontextprotocol/server-memory", Version: "2026.8.31", Env: map[string]string{"MEMORY_FILE_PATH": "$ROOT/work/memory.jsonl"}},
	{Package: "@modelcontextprotocol/server-sequential-thinking", Version: "2026.8.31"},
	{Package: "@wonderwhy-er/desktop-commander", Version: "0.2.52"},
	{Package: "cclsp", Version: "0.7.0", Env: map[string]string{"CCLSP_CONFIG_PATH": "$ROOT/cclsp.json"}},
	{Package: "@modelcontextprotocol/server-slack", Version: "2025.4.25", Env: map[string]string{"SLACK_BOT_TOKEN": "xoxb-dummy", "SLACK_TEAM_ID": "T00000000"}},
	{Package: "mcp-framework", Version: "0.2.22", Script: "mcp-framework-server/dist/index.js"},
	{Package: "@playwright/mcp", Version: "0.0.83", Args: []string{"--headless", "--isolated"}},
	{Package: "@upstash/context7-mcp", Version: "4.1.1"},
	{Package: "firecrawl-mcp", Version: "3.26.0", Env: map[string]string{"FIRECRAWL_API_KEY": "fc-dummy"}},
	{Package: "@notionhq/notion-mcp-server", Version: "2.5.2", Env: map[string]string{"NOTION_TOKEN": "ntn_dummy"}},
	{Package: "tavily-mcp", Version: "0.2.22", Env: map[string]string{"TAVILY_API_KEY": "tvly-dummy"}},
	{Package: "@brave/brave-search-mcp-server", Version: "2.1.4", Env: map[string]string{"BRAVE_API_KEY": "dummy"}},
	{Package: "@supabase/mcp-server-supabase", Version: "0.13.0", Args: []string{"--read-only"}, Env: map[string]string{"SUPABASE_ACCESS_TOKEN": "sbp_dummy"}},
	{Package: "@zereight/mcp-gitlab", Version: "2.1.64", Env: map[string]string{"GITLAB_PERSONAL_ACCESS_TOKEN": "glpat-dummy", "GITLAB_API_URL": "http://127.0.0.1:9/api/v4"}},
	{Package: "figma-developer-mcp", Version: "0.13.2", Args: []string{"--stdio"}, Env: map[string]string{"FIGMA_API_KEY": "dummy"}},
	{Package: "exa-mcp-server", Version: "3.4.1", Env: map[string]string{"EXA_API_KEY": "dummy"}},
	{Package: "@mui/mcp", Version: "0.1.6"},
	{Package: "@browsermcp/mcp", Version: "0.1.3"},
	{Package: "@agentdeskai/browser-tools-mcp", Version: "2.0.2"},
	{Package: "@kimtaeyoon83/mcp-server-youtube-transcript", Version: "0.1.1"},
	{Package: "@modelcontextprotocol/server-puppeteer", Version: "2025.5.12"},
	{Package: "@modelcontextprotocol/server-github", Version: "2025.4.8", Env: map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_dummy"}},
	{Package: "@modelcontextprotocol/server-gitlab", Version: "2025.4.25", Env: map[string]string{"GITLAB_PERSONAL_ACCESS_TOKEN": "glpat-dummy", "GITLAB_API_URL": "http://127.0.0.1:9/api/v4"}},
	{Package: "@modelcontextprotocol/server-google-maps", Version: "0.6.2", Env: map[string]string{"GOOGLE_MAPS_API_KEY": "dummy"}},
	{Package: "@modelcontextprotocol/server-brave-search", Version: "0.6.2", Env: map[string]string{"BRAVE_API_KEY": "dummy"}},
	{Package: "@modelcontextprotocol/server-postgres", Version: "0.6.2", Args: []string{"postgresql://dummy:dummy@127.0.0.1:9/dummy"}},
	{Package: "@modelcontextprotocol/server-redis", Version: "2025.4.25", Args: []string{"redis://127.0.0.1:9"}},
	{Package: "@modelcontextprotocol/server-gdrive", Version: "2025.1.14", Env: map[string]string{"GDRIVE_CREDENTIALS_PATH": "$ROOT/empty/gdrive-credentials.json", "GDRIVE_OAUTH_PATH": "$ROOT/empty/gcp-oauth.keys.json"}},
	{Package: "@modelcontextprotocol/server-everart", Version: "0.6.2", Env: map[string]string{"EVERART_API_KEY": "dummy"}},
	{Package: "@modelcontextprotocol/server-aws-kb-retrieval", Version: "0.6.2", Env: map[string]string{"AWS_ACCESS_KEY_ID": "AKIADUMMY", "AWS_SECRET_ACCESS_KEY": "dummy", "AWS_REGION": "us-east-1"}},
	{Package: "mcp-server-kubernetes", Version: "4.1.7", Env: map[string]string{"KUBECONFIG": "$ROOT/kubeconfig"}},
	{Package: "@heroku/mcp-server", Version: "1.2.8", Env: map[string]string{"HEROKU_API_KEY": "dummy"}},
	{Package: "@railway/mcp-server", Version: "0.1.12"},
	{Package: "@antv/mcp-server-chart", Version: "0.9.10"},
	{Package: "@bytebase/dbhub", Version: "1.4.0", Args: []string{"--transport", "stdio", "--demo"}},
	{Package: "@benborla29/mcp-server-mysql", Version: "2.0.9", Env: map[string]string{"MYSQL_HOST": "127.0.0.1", "MYSQL_PORT": "9", "MYSQL_USER": "dummy", "MYSQL_PASS": "dummy", "MYSQL_DB": "dummy"}},
	{Package: "chrome-devtools-mcp", Version: "1.11.0", Args: []string{"--headless", "--isolated"}},
	{Package: "@hubspot/mcp-server", Version: "0.4.0", Env: map[string]string{"PRIVATE_APP_ACCESS_TOKEN": "dummy"}},
	{Package: "@circleci/mcp-server-circleci", Version: "0.20.0", Env: map[string]string{"CIRCLECI_TOKEN": "dummy"}},
	{Package: "mongodb-mcp-server", Version: "3.0.4", Args: []string{"--readOnly"}, Env: map[string]string{"MDB_MCP_CONNECTION_STRING": "mongodb://127.0.0.1:9/", "MDB_MCP_TELEMETRY": "disabled"}},
	{Package: "@stripe/mcp", Version: "0.3.3", Args: []string{"--tools=all", "--api-key=sk_test_dummy"}},
	{Package: "@executeautomation/playwright-mcp-server", Version: "1.0.12"},
	{Package: "@gongrzhe/server-gmail-autoauth-mcp", Version: "1.1.11"},
	{Package: "@sentry/mcp-server", Version: "0.39.0", Args: []string{"--access-token=dummy"}},
	{Package: "@azure-devops/mcp", Version: "2.10.0", Args: []string{"dummyorg"}},
	{Package: "@cyanheads/git-mcp-server", Version: "2.15.3", Env: map[string]string{"MCP_TRANSPORT_TYPE": "stdio", "MCP_LOG_LEVEL": "error"}},
	{Package: "@jpisnice/shadcn-ui-mcp-server", Version: "2.0.0"},
	{Package: "duckduckgo-mcp-server", Version: "0.1.2"},
	{Package: "@aashari/mcp-server-atlassian-jira", Version: "3.3.0", Env: map[string]string{"ATLASSIAN_SITE_NAME": "dummy", "ATLASSIAN_USER_EMAIL": "dummy@example.invalid", "ATLASSIAN_API_TOKEN": "dummy"}},
	{Package: "@amap/amap-maps-mcp-server", Version: "0.0.8", Env: map[string]string{"AMAP_MAPS_API_KEY": "dummy"}},
	{Package: "@elastic/mcp-server-elasticsearch", Version: "0.3.1", Env: map[string]string{"ES_URL": "http://127.0.0.1:9", "ES_API_KEY": "dummy"}},
	{Package: "@currents/mcp", Version: "2.1.1", Env: map[string]string{"CURRENTS_API_KEY": "dummy"}},
	// --- corpus extension ---
	{Package: "mcp-hello-world", Version: "1.1.2"},
	{Package: "@eslint/mcp", Version: "0.3.13"},
	{Package: "nx-mcp", Version: "0.25.0", Args: []string{"$ROOT/empty"}},
	{Package: "@mastra/mcp-docs-server", Version: "1.2.27"},
	{Package: "@winor30/mcp-server-datadog", Version: "1.8.0", Env: map[string]string{"DATADOG_API_KEY": "dummy", "DATADOG_APP_KEY": "dummy"}},
	{Package: "@perplexity-ai/mcp-server", Version: "1.2.1", Env: map[string]string{"PERPLEXITY_API_KEY": "pplx-dummy"}},
	{Package: "@shortcut/mcp", Version: "0.25.0", Env: map[string]string{"SHORTCUT_API_TOKEN": "dummy"}},
	{Package: "@launchdarkly/mcp-server", Version: "0.6.2", Args: []string{"start", "--api-key", "api-dummy"}},
	{Package: "mcp-server-code-runner", Version: "0.1.8"},
	{Package: "@drawio/mcp", Version: "1.6.1"},
	{Package: "mcp-mermaid", Version: "0.4.1"},
	{Package: "@openbnb/mcp-server-airbnb", Version: "0.3.0", Args: []string{"--ignore-robots-txt"}},
	{Package: "@ivotoby/openapi-mcp-server", Version: "1.16.1", Args: []string{"--api-base-url", "http://127.0.0.1:9", "--openapi-spec", "$ROOT/openapi.json", "--transport", "stdio"}},
	{Package: "airtable-mcp-server", Version: "1.14.0", Env: map[string]string{"AIRTABLE_API_KEY": "patDummy.dummy"}},
	{Package: "@roychri/mcp-server-asana", Version: "1.8.0", Env: map[string]string{"ASANA_ACCESS_TOKEN": "dummy"}},
	{Package: "@sylphx/pdf-reader-mcp", Version: "2.4.0"},
	{Package: "mcp-searxng", Version: "2.4.0", Env: map[string]string{"SEARXNG_URL": "http://127.0.0.1:9"}},
	{Package: "reddit-mcp-buddy", Version: "1.1.14"},
	{Package: "@pinecone-database/mcp", Version: "0.3.0", Env: map[string]string{"PINECONE_API_KEY": "dummy"}},
	{Package: "@dangahagan/weather-mcp", Version: "1.23.0"},
	{Package: "@coo-quack/calc-mcp", Version: "2.1.1"},
	{Package: "mcp-deepwiki", Version: "0.0.10"},
	{Package: "kubernetes-mcp-server", Version: "0.0.67", Args: []string{"--read-only"}, Env: map[string]string{"KUBECONFIG": "$ROOT/kubeconfig"}},
	{Package: "@tiberriver256/mcp-server-azure-devops", Version: "0.1.48", Env: map[string]string{"AZURE_DEVOPS_ORG_URL": "https://dev.azure.com/dummyorg", "AZURE_DEVOPS_AUTH_METHOD": "pat", "AZURE_DEVOPS_PAT": "dummy", "AZURE_DEVOPS_DEFAULT_PROJECT": "dummy"}},
	{Package: "@line/line-bot-mcp-server", Version: "0.5.0", Env: map[string]string{"CHANNEL_ACCESS_TOKEN": "dummy", "DESTINATION_USER_ID": "U00000000000000000000000000000000"}},
	{Package: "@mapbox/mcp-server", Version: "0.14.0", Env: map[string]string{"MAPBOX_ACCESS_TOKEN": "pk.dummy"}},
	{Package: "next-devtools-mcp", Version: "0.4.0", Env: map[string]string{"NEXT_TELEMETRY_DISABLED": "1"}},
	{Package: "@chakra-ui/react-mcp", Version: "2.1.1"},
	{Package: "@negokaz/excel-mcp-server", Version: "0.12.0"},
	{Package: "time-mcp", Version: "1.0.6"},
	{Package: "mcp-sqlite", Version: "1.0.9", Args: []string{"$ROOT/work/corpus.sqlite"}},
	{Package: "mcp-obsidian", Version: "1.0.0", Args: []string{"$ROOT/empty"}},
	{Package: "todoist-mcp", Version: "1.3.4", Env: map[string]string{"API_KEY": "dummy", "TODOIST_API_TOKEN": "dummy"}},
	{Package: "mcp-discord", Version: "1.3.4", Env: map[string]string{"DISCORD_TOKEN": "dummy"}},
	{Package: "slack-mcp-server", Version: "1.3.0", Args: []string{"--transport", "stdio"}, Env: map[string]string{"SLACK_MCP_XOXP_TOKEN": "xoxp-dummy"}},
	{Package: "@kazuph/mcp-fetch", Version: "1.6.3"},
	{Package: "fastmcp", Version: "4.20.16", Script: "fastmcp-server/index.js"},
	{Package: "tmcp", Version: "1.20.0", Script: "tmcp-server/index.js"},
	// --- corpus extension, third batch ---
	{Package: "@azure/mcp", Version: "2.0.5", Args: []string{"server", "start"}, Env: map[string]string{"AZURE_MCP_COLLECT_TELEMETRY": "false"}},
	{Package: "@takescake/1password-mcp", Version: "4.0.2", Env: map[string]string{"OP_SERVICE_ACCOUNT_TOKEN": "ops_dummy"}},
	{Package: "bitbucket-mcp", Version: "5.0.6", Env: map[string]string{"BITBUCKET_URL": "https://api.bitbucket.org/2.0", "BITBUCKET_USERNAME": "dummy", "BITBUCKET_PASSWORD": "dummy", "BITBUCKET_WORKSPACE": "dummy"}},
	{Package: "@bitwarden/mcp-server", Version: "2026.7.0", Env: map[string]string{"BW_SESSION": "dummy"}},
	{Package: "@google-cloud/cloud-run-mcp", Version: "1.10.0"},
	{Package: "@masonator/coolify-mcp", Version: "3.5.0", Env: map[string]string{"COOLIFY_BASE_URL": "http://127.0.0.1:9", "COOLIFY_ACCESS_TOKEN": "dummy"}},
	{Package: "datadog-mcp", Version: "5.8.2", Env: map[string]string{"DD_API_KEY": "dummy", "DD_APP_KEY": "dummy"}},
	{Package: "hevy-mcp", Version: "6.1.13", Env: map[string]string{"HEVY_API_KEY": "dummy"}},
	{Package: "@instantdb/mcp", Version: "1.0.67", Args: []string{"--token", "dummy"}},
	{Package: "mcp-jira-cloud", Version: "4.4.0", Env: map[string]string{"JIRA_BASE_URL": "https://dummy.atlassian.net", "JIRA_EMAIL": "dummy@example.invalid", "JIRA_API_TOKEN": "dummy"}},
	{Package: "@larksuiteoapi/lark-mcp", Version: "0.5.1", Args: []string{"mcp", "-a", "cli_dummy", "-s", "dummy"}},
	{Package: "@mobilenext/mobile-mcp", Version: "1.0.4"},
	{Package: "@mondaydotcomorg/monday-api-mcp", Version: "3.3.0", Args: []string{"-t", "dummy"}},
	{Package: "@morphllm/morphmcp", Version: "0.8.213", Env: map[string]string{"MORPH_API_KEY": "dummy", "ALL_TOOLS": "true"}},
	{Package: "@softeria/ms-365-mcp-server", Version: "0.155.0"},
	{Package: "n8n-mcp", Version: "2.87.0", Env: map[string]string{"MCP_MODE": "stdio", "LOG_LEVEL": "error", "DISABLE_CONSOLE_OUTPUT": "true"}},
	{Package: "@remotion/mcp", Version: "4.0.527"},
	{Package: "@shopify/dev-mcp", Version: "1.16.0", Env: map[string]string{"OPT_OUT_INSTRUMENTATION": "true"}},
	{Package: "@z_ai/mcp-server", Version: "0.1.5", Env: map[string]string{"Z_AI_API_KEY": "dummy", "Z_AI_MODE": "ZAI"}},
	{Package: "argocd-mcp", Version: "0.9.0", Args: []string{"stdio"}, Env: map[string]string{"ARGOCD_BASE_URL": "https://127.0.0.1:9", "ARGOCD_API_TOKEN": "dummy"}},
	{Package: "@google-cloud/observability-mcp", Version: "0.2.3"},
	{Package: "@postman/postman-mcp-server", Version: "2.13.0", Env: map[string]string{"POSTMAN_API_KEY": "PMAK-dummy"}},
	{Package: "fetcher-mcp", Version: "0.3.9"},
	{Package: "figma-console-mcp", Version: "1.40.4", Env: map[string]string{"FIGMA_ACCESS_TOKEN": "figd_dummy"}},
	{Package: "@agent-infra/mcp-server-filesystem", Version: "1.2.29", Args: []string{"--allowed-directories", "$ROOT/empty"}},
	{Package: "hostinger-api-mcp", Version: "1.63.2", Env: map[string]string{"API_TOKEN": "dummy"}},
	{Package: "@browserstack/mcp-server", Version: "1.4.2", Env: map[string]string{"BROWSERSTACK_USERNAME": "dummy", "BROWSERSTACK_ACCESS_KEY": "dummy"}},
	{Package: "@aashari/mcp-server-atlassian-bitbucket", Version: "3.1.0", Env: map[string]string{"ATLASSIAN_BITBUCKET_USERNAME": "dummy", "ATLASSIAN_BITBUCKET_APP_PASSWORD": "dummy"}},
	{Package: "howtocook-mcp", Version: "0.2.2"},
	{Package: "@knip/mcp", Version: "0.0.36"},
	{Package: "@delorenj/mcp-server-trello", Version: "1.8.1", Env: map[string]string{"TRELLO_API_KEY": "dummy", "TRELLO_TOKEN": "dummy", "TRELLO_BOARD_ID": "dummy"}},
	{Package: "@neondatabase/mcp-server-neon", Version: "0.3.7", Args: []string{"start", "napi_dummy"}},
	{Package: "@cablate/mcp-google-map", Version: "0.0.63", Args: []string{"--stdio"}, Env: map[string]string{"GOOGLE_MAPS_API_KEY": "dummy"}},
	{Package: "@kimsungwhee/apple-docs-mcp", Version: "1.0.26"},
	{Package: "@variflight-ai/variflight-mcp", Version: "1.0.3", Env: map[string]string{"VARIFLIGHT_API_KEY": "dummy"}},
	{Package: "@makeplane/plane-mcp-server", Version: "0.1.5", Env: map[string]string{"PLANE_API_KEY": "dummy", "PLANE_WORKSPACE_SLUG": "dummy", "PLANE_API_HOST_URL": "http://127.0.0.1:9"}},
}

// probes are, by package, calls of real listed tools that fail without a
// network and without side effects: a missing file, an id that does not
// exist, missing or wrong arguments. No tool that writes, deletes, runs a
// command or navigates a browser is called. A probe of a tool the server
// does not list is not sent.
var probes = map[string][]Probe{
	"@modelcontextprotocol/server-everything": {
		{Tool: "echo", Args: map[string]any{}},
		{Tool: "get-sum", Args: map[string]any{"a": "one", "b": 2}},
	},
	"@modelcontextprotocol/server-filesystem": {
		{Tool: "read_text_file", Args: map[string]any{"path": missing}},
		{Tool: "list_directory", Args: map[string]any{"path": "$ROOT/empty/no-such-dir"}},
		{Tool: "read_text_file", Args: map[string]any{"path": "/etc/hostname"}},
	},
	"@modelcontextprotocol/server-memory": {
		{Tool: "open_nodes", Args: map[string]any{"names": []string{"no-such-entity"}}},
		{Tool: "search_nodes", Args: map[string]any{}},
	},
	"@modelcontextprotocol/server-sequential-thinking": {
		{Tool: "sequentialthinking", Args: map[string]any{}},
	},
	"@wonderwhy-er/desktop-commander": {
		{Tool: "read_file", Args: map[string]any{"path": missing}},
		{Tool: "get_file_info", Args: map[string]any{"path": missing}},
		{Tool: "list_directory", Args: map[string]any{"path": "$ROOT/empty/no-such-dir"}},
	},
	"cclsp": {
		{Tool: "find_definition", Args: map[string]any{"file_path": "$ROOT/empty/missing.ts", "symbol_name": "noSuchSymbol"}},
		{Tool: "get_diagnostics", Args: map[string]any{"file_path": "$ROOT/empty/missing.ts"}},
	},
	"@modelcontextprotocol/server-slack": {
		{Tool: "slack_get_user_profile", Args: map[string]any{"user_id": "U00000000"}},
		{Tool: "slack_get_thread_replies", Args: map[string]any{}},
	},
	"mcp-framework": {
		{Tool: "echo", Args: map[string]any{}},
	},
	"@playwright/mcp": {
		{Tool: "browser_tabs", Args: map[string]any{"action": "list"}},
	},
	"@upstash/context7-mcp": {
		{Tool: "resolve-library-id", Args: map[string]any{}},
		{Tool: "query-docs", Args: map[string]any{"libraryId": "/no-such-org/no-such-library", "query": "x"}},
	},
	"firecrawl-mcp": {
		{Tool: "firecrawl_check_crawl_status", Args: map[string]any{"id": "00000000-0000-0000-0000-000000000000"}},
		{Tool: "firecrawl_scrape", Args: map[string]any{}},
	},
	"@notionhq/notion-mcp-server": {
		{Tool: "API-retrieve-a-page", Args: map[string]any{"page_id": "00000000000000000000000000000000"}},
		{Tool: "API-get-user", Args: map[string]any{}},
	},
	"tavily-mcp":                     {{Tool: "tavily_search", Args: map[string]any{}}},
	"@brave/brave-search-mcp-server": {{Tool: "brave_web_search", Args: map[string]any{}}},
	"@zereight/mcp-gitlab": {
		{Tool: "get_file_contents", Args: map[string]any{"project_id": "no-such-group/no-such-project", "file_path": "missing.txt"}},
		{Tool: "get_branch", Args: map[string]any{}},
	},
	"figma-developer-mcp":            {{Tool: "get_figma_data", Args: map[string]any{"fileKey": "noSuchFileKey"}}},
	"exa-mcp-server":                 {{Tool: "web_search_exa", Args: map[string]any{}}},
	"@mui/mcp":                       {{Tool: "fetchDocs", Args: map[string]any{}}},
	"@browsermcp/mcp":                {{Tool: "browser_snapshot", Args: map[string]any{}}},
	"@agentdeskai/browser-tools-mcp": {{Tool: "getConsoleLogs", Args: map[string]any{}}},
	"@kimtaeyoon83/mcp-server-youtube-transcript": {
		{Tool: "get_transcript", Args: map[string]any{"url": "not-a-video", "lang": "en"}},
	},
	"@modelcontextprotocol/server-puppeteer": {{Tool: "puppeteer_screenshot", Args: map[string]any{"name": "x"}}},
	"@modelcontextprotocol/server-github": {
		{Tool: "get_issue", Args: map[string]any{"owner": "no-such-owner", "repo": "no-such-repo", "issue_number": 1}},
		{Tool: "get_file_contents", Args: map[string]any{}},
	},
	"@modelcontextprotocol/server-gitlab": {
		{Tool: "get_file_contents", Args: map[string]any{"project_id": "no-such-group/no-such-project", "file_path": "missing.txt"}},
	},
	"@modelcontextprotocol/server-google-maps": {
		{Tool: "maps_place_details", Args: map[string]any{"place_id": "no-such-place"}},
		{Tool: "maps_geocode", Args: map[string]any{}},
	},
	"@modelcontextprotocol/server-brave-search": {{Tool: "brave_web_search", Args: map[string]any{}}},
	"@modelcontextprotocol/server-postgres": {
		{Tool: "query", Args: map[string]any{"sql": "SELECT * FROM no_such_table"}},
	},
	"@modelcontextprotocol/server-aws-kb-retrieval": {
		{Tool: "retrieve_from_aws_kb", Args: map[string]any{"query": "x", "knowledgeBaseId": "NOSUCHKB00"}},
	},
	"@antv/mcp-server-chart": {{Tool: "generate_bar_chart", Args: map[string]any{}}},
	"chrome-devtools-mcp": {
		{Tool: "select_page", Args: map[string]any{"pageId": 999}},
	},
	"@hubspot/mcp-server": {
		{Tool: "hubspot-get-property", Args: map[string]any{"objectType": "contacts", "propertyName": "no_such_property"}},
		{Tool: "hubspot-get-user-details", Args: map[string]any{}},
	},
	"@circleci/mcp-server-circleci": {
		{Tool: "get_latest_pipeline_status", Args: map[string]any{}},
		{Tool: "list_artifacts", Args: map[string]any{"params": map[string]any{}}},
	},
	"mcp-server-kubernetes": {
		{Tool: "kubectl_get", Args: map[string]any{"resourceType": "pods", "name": "no-such-pod", "namespace": "default"}},
	},
	"mongodb-mcp-server": {
		{Tool: "find", Args: map[string]any{"connectionId": "no-such-connection", "database": "nodb", "collection": "nocollection"}},
		{Tool: "list-collections", Args: map[string]any{"database": "nodb"}},
	},
	"@executeautomation/playwright-mcp-server": {
		{Tool: "get_codegen_session", Args: map[string]any{"sessionId": "no-such-session"}},
	},
	"@sentry/mcp-server": {
		// A listed tool that runs another tool by name: its own answer to
		// a name it does not know is an execution error of a listed tool.
		{Tool: "execute_sentry_tool", Args: map[string]any{"name": "no_such_tool"}},
		{Tool: "get_sentry_resource", Args: map[string]any{"resourceType": "issue", "resourceId": "NO-SUCH-ISSUE", "organizationSlug": "no-such-org"}},
	},
	"@cyanheads/git-mcp-server": {
		{Tool: "git_status", Args: map[string]any{"path": "$ROOT/empty/no-such-repo"}},
		{Tool: "git_log", Args: map[string]any{"path": "$ROOT/empty"}},
	},
	"@jpisnice/shadcn-ui-mcp-server": {
		{Tool: "get_component", Args: map[string]any{"componentName": "no-such-component"}},
	},
	"duckduckgo-mcp-server":              {{Tool: "duckduckgo_web_search", Args: map[string]any{}}},
	"@aashari/mcp-server-atlassian-jira": {{Tool: "jira_get", Args: map[string]any{"path": "/rest/api/3/issue/NOPE-1"}}},
	"@amap/amap-maps-mcp-server":         {{Tool: "maps_weather", Args: map[string]any{}}},
	"@elastic/mcp-server-elasticsearch":  {{Tool: "get_mappings", Args: map[string]any{"index": "no-such-index"}}},
	"@currents/mcp":                      {{Tool: "currents-get-run-details", Args: map[string]any{"runId": "no-such-run"}}},
	// --- corpus extension ---
	"mcp-hello-world": {
		{Tool: "echo", Args: map[string]any{}},
		{Tool: "add", Args: map[string]any{"a": "one", "b": 2}},
	},
	"@eslint/mcp": {{Tool: "lint-files", Args: map[string]any{"filePaths": []string{"$ROOT/empty/missing.js"}}}},
	"nx-mcp":      {{Tool: "nx_docs", Args: map[string]any{}}},
	"@mastra/mcp-docs-server": {
		{Tool: "readMastraDocs", Args: map[string]any{"package": "no-such-package", "projectPath": "$ROOT/empty"}},
		{Tool: "getMastraExportDetails", Args: map[string]any{"package": "core", "exportName": "NoSuchExport", "projectPath": "$ROOT/empty"}},
	},
	"@winor30/mcp-server-datadog": {
		{Tool: "get_incident", Args: map[string]any{"incidentId": "no-such-incident"}},
		{Tool: "get_dashboard", Args: map[string]any{}},
	},
	"@perplexity-ai/mcp-server": {{Tool: "perplexity_search", Args: map[string]any{}}},
	"@shortcut/mcp":             {{Tool: "stories-get-by-id", Args: map[string]any{"storyPublicId": 999999999}}},
	"@launchdarkly/mcp-server":  {{Tool: "get-feature-flag", Args: map[string]any{"request": map[string]any{}}}},
	"@drawio/mcp": {
		{Tool: "list_pages", Args: map[string]any{"path": "$ROOT/empty/missing.drawio"}},
		{Tool: "get_page", Args: map[string]any{"path": "$ROOT/empty/missing.drawio", "page": 0}},
	},
	"mcp-mermaid":                 {{Tool: "generate_mermaid_diagram", Args: map[string]any{}}},
	"@openbnb/mcp-server-airbnb":  {{Tool: "airbnb_listing_details", Args: map[string]any{"id": "no-such-listing"}}},
	"@ivotoby/openapi-mcp-server": {{Tool: "get-pet-by-id", Args: map[string]any{"petId": "no-such-pet"}}},
	"airtable-mcp-server": {
		{Tool: "get_record", Args: map[string]any{"baseId": "appNoSuchBase0000", "tableId": "tblNoSuchTable000", "recordId": "recNoSuchRecord00"}},
	},
	"@roychri/mcp-server-asana": {{Tool: "asana_get_task", Args: map[string]any{"task_id": "0"}}},
	"@sylphx/pdf-reader-mcp":    {{Tool: "read_pdf", Args: map[string]any{"sources": []any{map[string]any{"path": "$ROOT/empty/missing.pdf"}}}}},
	"mcp-searxng": {
		{Tool: "searxng_instance_info", Args: map[string]any{}},
		{Tool: "web_url_read", Args: map[string]any{}},
	},
	"reddit-mcp-buddy":        {{Tool: "get_post_details", Args: map[string]any{"post_id": "nosuchpost"}}},
	"@pinecone-database/mcp":  {{Tool: "describe-index", Args: map[string]any{"name": "no-such-index"}}},
	"@dangahagan/weather-mcp": {{Tool: "get_forecast", Args: map[string]any{}}},
	"@coo-quack/calc-mcp": {
		{Tool: "jwt_decode", Args: map[string]any{"token": "not-a-jwt"}},
		{Tool: "semver", Args: map[string]any{"action": "no-such-action", "version": "x"}},
	},
	"mcp-deepwiki": {{Tool: "deepwiki_fetch", Args: map[string]any{"url": "no-such-org/no-such-repo"}}},
	"kubernetes-mcp-server": {
		{Tool: "pods_get", Args: map[string]any{"name": "no-such-pod", "namespace": "default"}},
		{Tool: "resources_get", Args: map[string]any{"apiVersion": "v1", "kind": "NoSuchKind", "name": "x"}},
	},
	"@tiberriver256/mcp-server-azure-devops": {{Tool: "get_work_item", Args: map[string]any{"workItemId": 999999}}},
	"@line/line-bot-mcp-server":              {{Tool: "get_profile", Args: map[string]any{"userId": "U00000000000000000000000000000000"}}},
	"@mapbox/mcp-server": {
		{Tool: "place_details_tool", Args: map[string]any{"mapbox_id": "no-such-id"}},
		{Tool: "length_tool", Args: map[string]any{"coordinates": "x"}},
	},
	"next-devtools-mcp": {
		// A listed tool that calls a tool of a Next.js dev server by name
		// (none runs: a closed loopback port).
		{Tool: "nextjs_call", Args: map[string]any{"port": "9", "toolName": "no_such_tool"}},
		{Tool: "nextjs_docs", Args: map[string]any{"topic": "no-such-topic"}},
	},
	"@negokaz/excel-mcp-server": {
		{Tool: "excel_describe_sheets", Args: map[string]any{"fileAbsolutePath": "$ROOT/empty/missing.xlsx"}},
		{Tool: "excel_read_sheet", Args: map[string]any{"fileAbsolutePath": "$ROOT/empty/missing.xlsx", "sheetName": "NoSuchSheet"}},
	},
	"time-mcp": {
		{Tool: "convert_time", Args: map[string]any{"sourceTimezone": "No/Such_Zone", "targetTimezone": "UTC", "time": "2025-01-01 00:00:00"}},
		{Tool: "days_in_month", Args: map[string]any{"date": "not-a-date"}},
	},
	"mcp-sqlite": {
		{Tool: "get_table_schema", Args: map[string]any{"tableName": "no_such_table"}},
		{Tool: "read_records", Args: map[string]any{"table": "no_such_table"}},
		{Tool: "query", Args: map[string]any{"sql": "SELECT * FROM no_such_table"}},
	},
	"mcp-obsidian": {{Tool: "read_notes", Args: map[string]any{"paths": []string{"missing.md"}}}},
	"todoist-mcp": {
		{Tool: "get_tasks", Args: map[string]any{"items": []any{map[string]any{"task_id": "0"}}}},
		{Tool: "get_projects", Args: map[string]any{}},
	},
	"mcp-discord": {
		{Tool: "discord_read_messages", Args: map[string]any{"channelId": "0"}},
		{Tool: "discord_get_server_info", Args: map[string]any{"guildId": "0"}},
	},
	"@kazuph/mcp-fetch": {{Tool: "imageFetch", Args: map[string]any{"url": "not a url"}}},
	"fastmcp":           {{Tool: "add", Args: map[string]any{"a": "one", "b": 2}}},
	"tmcp":              {{Tool: "echo", Args: map[string]any{}}},
	// --- corpus extension, third batch ---
	"@azure/mcp": {
		{Tool: "group_list", Args: map[string]any{}},
		{Tool: "storage", Args: map[string]any{}},
	},
	"@takescake/1password-mcp": {
		{Tool: "item_lookup", Args: map[string]any{}},
		{Tool: "item_get", Args: map[string]any{"vaultId": "no-such-vault", "itemId": "no-such-item"}},
		{Tool: "op_check_ref", Args: map[string]any{"secretReference": "no-such-reference"}},
	},
	"bitbucket-mcp": {
		{Tool: "getRepository", Args: map[string]any{"workspace": "no-such-workspace", "repo_slug": "no-such-repo"}},
		{Tool: "getPullRequest", Args: map[string]any{"workspace": "no-such-workspace", "repo_slug": "no-such-repo", "pull_request_id": "0"}},
	},
	"@bitwarden/mcp-server": {
		{Tool: "get", Args: map[string]any{"object": "no-such-object", "id": "no-such-id"}},
		{Tool: "list", Args: map[string]any{"type": "no-such-type"}},
		{Tool: "generate", Args: map[string]any{"length": 1}},
	},
	"@google-cloud/cloud-run-mcp": {
		{Tool: "get_service", Args: map[string]any{"project": "no-such-project", "region": "us-central1", "service": "no-such-service"}},
		{Tool: "list_services", Args: map[string]any{}},
	},
	"@masonator/coolify-mcp": {
		{Tool: "get_application", Args: map[string]any{"uuid": "no-such-application"}},
		{Tool: "get_server", Args: map[string]any{}},
	},
	"datadog-mcp": {
		{Tool: "monitors", Args: map[string]any{}},
		{Tool: "incidents", Args: map[string]any{"action": "get", "id": "no-such-incident"}},
	},
	"hevy-mcp": {
		{Tool: "get-workout", Args: map[string]any{}},
		{Tool: "get-routine", Args: map[string]any{"routine_id": "no-such-routine"}},
	},
	"@instantdb/mcp": {
		{Tool: "get-schema", Args: map[string]any{"appId": "no-such-app"}},
		{Tool: "query", Args: map[string]any{"appId": "00000000-0000-0000-0000-000000000000", "query": map[string]any{"no-such-namespace": map[string]any{}}}},
	},
	"mcp-jira-cloud": {
		{Tool: "jira_get_issue", Args: map[string]any{"issueIdOrKey": "NOPE-1"}},
		{Tool: "jira_get_project", Args: map[string]any{}},
	},
	"@larksuiteoapi/lark-mcp": {
		{Tool: "bitable_v1_appTable_list", Args: map[string]any{}},
		{Tool: "bitable_v1_appTable_list", Args: map[string]any{"path": map[string]any{"app_token": "no-such-app"}}},
	},
	"@mobilenext/mobile-mcp": {
		// The answer names another listed tool, and says "not found".
		{Tool: "mobile_list_apps", Args: map[string]any{"device": "no-such-device"}},
		{Tool: "mobile_get_screen_size", Args: map[string]any{}},
	},
	"@mondaydotcomorg/monday-api-mcp": {
		// A JSON-RPC -32602 that names the called tool: its arguments.
		{Tool: "get_board_schema", Args: map[string]any{}},
		{Tool: "get_board_info", Args: map[string]any{"boardId": "not-a-number"}},
	},
	"@morphllm/morphmcp": {
		{Tool: "codebase_search", Args: map[string]any{}},
		{Tool: "reflex_list", Args: map[string]any{}},
	},
	"@softeria/ms-365-mcp-server": {
		{Tool: "verify-login", Args: map[string]any{}},
		{Tool: "get-drive-item", Args: map[string]any{"driveId": "no-such-drive", "driveItemId": "no-such-item"}},
	},
	"n8n-mcp": {
		// A listed tool that documents other tools by name: its own answer
		// to a name it does not know.
		{Tool: "tools_documentation", Args: map[string]any{"topic": "no_such_tool"}},
		{Tool: "get_node", Args: map[string]any{"nodeType": "nodes-base.noSuchNode"}},
		{Tool: "get_template", Args: map[string]any{"templateId": 999999999}},
	},
	"@remotion/mcp": {{Tool: "remotion-documentation", Args: map[string]any{}}},
	"@shopify/dev-mcp": {
		{Tool: "learn_shopify_api", Args: map[string]any{"api": "no-such-api"}},
		{Tool: "search_docs_chunks", Args: map[string]any{}},
	},
	"@z_ai/mcp-server": {
		{Tool: "analyze_image", Args: map[string]any{}},
		{Tool: "extract_text_from_screenshot", Args: map[string]any{"image_source": "$ROOT/empty/missing.png", "prompt": "x"}},
	},
	"argocd-mcp": {
		{Tool: "get_application", Args: map[string]any{"applicationName": "no-such-application"}},
		{Tool: "get_application", Args: map[string]any{}},
	},
	"@google-cloud/observability-mcp": {
		{Tool: "list_log_names", Args: map[string]any{"parent": "projects/no-such-project"}},
		{Tool: "list_log_entries", Args: map[string]any{}},
	},
	"@postman/postman-mcp-server": {
		{Tool: "getCollection", Args: map[string]any{"collectionId": "no-such-collection"}},
		{Tool: "getWorkspace", Args: map[string]any{}},
	},
	"fetcher-mcp": {
		{Tool: "fetch_url", Args: map[string]any{}},
		{Tool: "fetch_urls", Args: map[string]any{"urls": []string{"not a url"}}},
	},
	"figma-console-mcp": {
		{Tool: "figma_get_component_details", Args: map[string]any{"componentKey": "no-such-component"}},
		{Tool: "figma_get_console_logs", Args: map[string]any{"count": "not-a-number"}},
	},
	"@agent-infra/mcp-server-filesystem": {
		{Tool: "read_file", Args: map[string]any{"path": missing}},
		{Tool: "list_directory", Args: map[string]any{"path": "$ROOT/empty/no-such-dir"}},
		{Tool: "get_file_info", Args: map[string]any{"path": "/etc/hostname"}},
	},
	"hostinger-api-mcp": {
		{Tool: "domains_getDomainDetailsV1", Args: map[string]any{"domain": "no-such-domain.invalid"}},
		{Tool: "VPS_getVirtualMachineDetailsV1", Args: map[string]any{"virtualMachineId": 0}},
	},
	"@browserstack/mcp-server": {
		{Tool: "getAccessibilityAuthConfig", Args: map[string]any{"configId": "not-a-number"}},
		{Tool: "fetchAccessibilityIssues", Args: map[string]any{"scanId": "no-such-scan", "scanRunId": "no-such-run"}},
	},
	"@aashari/mcp-server-atlassian-bitbucket": {
		{Tool: "bb_get", Args: map[string]any{"path": "/repositories/no-such-workspace/no-such-repo"}},
		{Tool: "bb_get", Args: map[string]any{}},
	},
	"howtocook-mcp": {
		{Tool: "mcp_howtocook_getRecipeById", Args: map[string]any{"query": "no-such-recipe"}},
		{Tool: "mcp_howtocook_getRecipesByCategory", Args: map[string]any{"category": "no-such-category"}},
	},
	"@knip/mcp": {
		{Tool: "knip-docs", Args: map[string]any{"topic": "no-such-topic"}},
		{Tool: "knip-docs", Args: map[string]any{}},
	},
	"@delorenj/mcp-server-trello": {
		{Tool: "get_card", Args: map[string]any{"cardId": "no-such-card"}},
		{Tool: "get_cards_by_list_id", Args: map[string]any{}},
	},
	"@neondatabase/mcp-server-neon": {
		{Tool: "describe_project", Args: map[string]any{"params": map[string]any{"projectId": "no-such-project"}}},
		// A JSON-RPC -32602 that names the called tool: its arguments.
		{Tool: "list_projects", Args: map[string]any{}},
	},
	"@cablate/mcp-google-map": {
		{Tool: "maps_geocode", Args: map[string]any{"address": "no such address"}},
		{Tool: "maps_place_details", Args: map[string]any{}},
	},
	"@kimsungwhee/apple-docs-mcp": {
		{Tool: "get_apple_doc_content", Args: map[string]any{"url": "no-such-url"}},
		{Tool: "get_related_apis", Args: map[string]any{"apiUrl": "no-such-url"}},
		{Tool: "search_apple_docs", Args: map[string]any{}},
	},
	"@variflight-ai/variflight-mcp": {
		{Tool: "searchFlightsByNumber", Args: map[string]any{}},
		{Tool: "getRealtimeLocationByAnum", Args: map[string]any{"anum": "NOSUCH"}},
	},
	"@makeplane/plane-mcp-server": {
		{Tool: "list_states", Args: map[string]any{"project_id": "no-such-project"}},
		{Tool: "get_issue_type", Args: map[string]any{}},
	},
}

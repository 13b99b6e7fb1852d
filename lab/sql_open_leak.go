package lab

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

func sqlOpenLeak() Scenario {
	return Scenario{
		Name: "sql-open-leak",
		Story: "An accounts service looks up a customer's balance in its ledger database for every " +
			"request, and its lookup opens the database with sql.Open each time and never closes " +
			"it. A *sql.DB is a pool meant to live as long as the program: each sql.Open starts " +
			"database/sql's connectionOpener goroutine, which waits until Close, and the query " +
			"leaves a connection idle in the new pool, with the driver's 4 KiB buffer. So every " +
			"request leaks a goroutine and a connection, about 30 a second. None of those " +
			"goroutines has a frame of the program in its stack: database/sql.OpenDB created them, " +
			"called from lookup's sql.Open. The fix is one sql.Open at start, shared by every request.",
		Expect: Expect{
			Kinds:    []string{kindGoroutineLeak},
			Culprit:  "github.com/memdoctor/memdoctor/lab.(*ledger).lookup",
			Line:     ledgerOpenLine,
			Absent:   []string{kindNonGoMemory, kindTransientSpike},
			Watch:    20 * time.Second,
			Interval: 2 * time.Second,
		},
		Run: runSQLOpenLeak,
	}
}

const (
	ledgerRequests = 30   // per second
	openDBLabCap   = 4000 // lab safety valve: past it lookup closes its database
	// ledgerOpenLine is the line of lookup's sql.Open (TestExpectedLines checks it).
	ledgerOpenLine = 85
)

func runSQLOpenLeak(ctx context.Context, env Env) error {
	registerLabDB()
	l := &ledger{}
	return serve(ctx, env, service{
		name: "sql-open-leak",
		routes: map[string]http.HandlerFunc{
			"GET /balance/{account}": l.handleBalance,
		},
		stopping: l.close,
		loads: []load{{workers: 8, every: time.Second / ledgerRequests, send: func(ctx context.Context, c *client, _ int) error {
			account := strconv.FormatInt(c.requests.Load()%10000, 10)
			return c.send(ctx, call{method: http.MethodGet, path: "/balance/" + account})
		}}},
	})
}

// ledger is the accounts service's access to its ledger database.
type ledger struct {
	// Lab bookkeeping, not part of the bug: open records the databases lookup left open, so
	// that close can close them when the scenario stops, and caps them (openDBLabCap). The
	// production code had no such list.
	mu      sync.Mutex
	open    []*sql.DB
	stopped bool
}

func (l *ledger) handleBalance(w http.ResponseWriter, r *http.Request) {
	cents, err := l.lookup(r.Context(), r.PathValue("account"))
	w.Header().Set("Content-Type", "text/plain")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	io.WriteString(w, strconv.FormatInt(cents, 10))
}

// lookup reads an account's balance. The bug: it opens the database for every call and never
// closes it (ledgerOpenLine is the sql.Open below).
func (l *ledger) lookup(ctx context.Context, account string) (int64, error) {
	db, err := sql.Open(labDBDriver, "ledger")
	if err != nil {
		return 0, err
	}
	if !l.leaked(db) {
		defer db.Close() // the scenario is stopping, or past the lab's cap
	}
	var cents int64
	if err := db.QueryRowContext(ctx, "SELECT balance FROM accounts WHERE id = ?", account).Scan(&cents); err != nil {
		return 0, fmt.Errorf("ledger: %w", err)
	}
	return cents, nil
}

// leaked records a database left open, unless the scenario is stopping or the lab's cap is
// reached.
func (l *ledger) leaked(db *sql.DB) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped || len(l.open) >= openDBLabCap {
		return false
	}
	l.open = append(l.open, db)
	return true
}

// close closes the databases lookup left open (lab bookkeeping).
func (l *ledger) close() {
	l.mu.Lock()
	l.stopped = true
	open := l.open
	l.open = nil
	l.mu.Unlock()
	for _, db := range open {
		db.Close()
	}
}

// labDBDriver is the name of the lab's database driver: an in-memory ledger, so that the
// scenario needs no database server. Like a network driver's, sql.Open parses the data source
// name into a configuration (its runtime parameters, a statement cache sized up front), and
// each connection keeps a buffer for the wire protocol.
const labDBDriver = "memdoctor-lab-ledger"

var registerOnce sync.Once

func registerLabDB() { registerOnce.Do(func() { sql.Register(labDBDriver, labDB{}) }) }

type labDB struct{}

func (labDB) Open(dsn string) (driver.Conn, error) {
	c, err := labDB{}.OpenConnector(dsn)
	if err != nil {
		return nil, err
	}
	return c.Connect(context.Background())
}

// OpenConnector parses the data source name, as sql.Open has a driver do.
func (labDB) OpenConnector(dsn string) (driver.Connector, error) {
	cfg := &labConfig{database: dsn, params: map[string]string{
		"application_name": "accounts", "client_encoding": "UTF8", "timezone": "UTC", "statement_timeout": "5000",
	}, stmts: make(map[string]string, 64)}
	return &labConnector{cfg: cfg}, nil
}

// labConfig is what a driver parses a data source name into.
type labConfig struct {
	database string
	params   map[string]string // runtime parameters sent at connect
	stmts    map[string]string // the prepared statements' cache
}

type labConnector struct{ cfg *labConfig }

func (c *labConnector) Connect(context.Context) (driver.Conn, error) {
	return &labConn{cfg: c.cfg, buf: make([]byte, 4<<10)}, nil
}
func (c *labConnector) Driver() driver.Driver { return labDB{} }

// labConn is one connection: its buffer, as a wire protocol's reader keeps one.
type labConn struct {
	cfg *labConfig
	buf []byte
}

func (c *labConn) Prepare(string) (driver.Stmt, error) {
	return nil, errors.New("lab ledger: prepared statements are not supported")
}
func (c *labConn) Close() error              { return nil }
func (c *labConn) Begin() (driver.Tx, error) { return nil, errors.New("lab ledger: no transactions") }

// QueryContext answers the balance query: the account's number, in cents.
func (c *labConn) QueryContext(_ context.Context, _ string, args []driver.NamedValue) (driver.Rows, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("lab ledger: want 1 argument, got %d", len(args))
	}
	id, _ := args[0].Value.(string)
	n := copy(c.buf, id)
	v, _ := strconv.ParseInt(string(c.buf[:n]), 10, 64)
	return &labRows{v: v * 100}, nil
}

type labRows struct {
	v    int64
	done bool
}

func (r *labRows) Columns() []string { return []string{"balance"} }
func (r *labRows) Close() error      { return nil }
func (r *labRows) Next(dest []driver.Value) error {
	if r.done {
		return io.EOF
	}
	r.done = true
	dest[0] = r.v
	return nil
}

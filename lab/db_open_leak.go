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

func dbOpenLeak() Scenario {
	return Scenario{
		Name: "db-open-leak",
		Story: "An inventory service answers each stock query from its catalogue database, and its " +
			"handler opens the database with sql.Open for every request and never closes it, as " +
			"sql-open-leak's does; but here the driver parses its data source name into a few " +
			"words, as an embedded database's does, so sql.Open allocates a few hundred bytes " +
			"while the query that follows reads a row of 2 KiB. Each sql.Open starts " +
			"database/sql's connectionOpener goroutine, which waits until Close: about 30 leak a " +
			"second. The heap profile samples one allocation in 512 KiB, so the constructor's are " +
			"rarely sampled and the query's often: the profiles alone point at the query's line. " +
			"The line that made the goroutines is sql.Open's, six lines above; the fix is one " +
			"sql.Open at start, shared by every request.",
		Expect: Expect{
			Kinds:    []string{kindGoroutineLeak},
			Culprit:  "github.com/memdoctor/memdoctor/lab.(*stockDB).stock",
			Line:     catalogueOpenLine,
			Absent:   []string{kindNonGoMemory, kindTransientSpike},
			Watch:    8 * time.Second,
			Interval: time.Second,
		},
		Run: runDBOpenLeak,
	}
}

const (
	catalogueRequests = 30 // per second
	catalogueRow      = 2 << 10
	// catalogueOpenLine is the line of stock's sql.Open (TestExpectedLines checks it).
	catalogueOpenLine = 82
)

func runDBOpenLeak(ctx context.Context, env Env) error {
	registerCatalogueDB()
	c := &stockDB{}
	return serve(ctx, env, service{
		name: "db-open-leak",
		routes: map[string]http.HandlerFunc{
			"GET /stock/{sku}": c.handleStock,
		},
		stopping: c.close,
		loads: []load{{workers: 8, every: time.Second / catalogueRequests, send: func(ctx context.Context, cl *client, _ int) error {
			sku := strconv.FormatInt(cl.requests.Load()%5000, 10)
			return cl.send(ctx, call{method: http.MethodGet, path: "/stock/" + sku})
		}}},
	})
}

// stockDB is the inventory service's access to its catalogue database. Its lab bookkeeping
// (the databases stock left open, closed when the scenario stops, and capped) is the ledger's
// of sql-open-leak; the production code had none.
type stockDB struct{ ledger }

func (c *stockDB) handleStock(w http.ResponseWriter, r *http.Request) {
	n, err := c.stock(r.Context(), r.PathValue("sku"))
	w.Header().Set("Content-Type", "text/plain")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	io.WriteString(w, strconv.Itoa(n))
}

// stock reads how many of sku are in stock. The bug: it opens the database for every call
// and never closes it (catalogueOpenLine is the sql.Open below).
func (c *stockDB) stock(ctx context.Context, sku string) (int, error) {
	db, err := sql.Open(catalogueDriver, "catalogue")
	if err != nil {
		return 0, err
	}
	if !c.leaked(db) {
		defer db.Close() // the scenario is stopping, or past the lab's cap (openDBLabCap)
	}
	var row []byte
	if err := db.QueryRowContext(ctx, "SELECT row FROM stock WHERE sku = ?", sku).Scan(&row); err != nil {
		return 0, fmt.Errorf("catalogue: %w", err)
	}
	return int(row[0]), nil
}

// catalogueDriver is the lab's embedded catalogue database: its data source name is a name,
// and each query reads a row of catalogueRow bytes.
const catalogueDriver = "memdoctor-lab-catalogue"

var registerCatalogueOnce sync.Once

func registerCatalogueDB() {
	registerCatalogueOnce.Do(func() { sql.Register(catalogueDriver, catalogueDB{}) })
}

type catalogueDB struct{}

func (catalogueDB) Open(name string) (driver.Conn, error) { return &catalogueConn{name: name}, nil }

type catalogueConn struct{ name string }

func (c *catalogueConn) Prepare(string) (driver.Stmt, error) {
	return nil, errors.New("lab catalogue: prepared statements are not supported")
}
func (c *catalogueConn) Close() error { return nil }
func (c *catalogueConn) Begin() (driver.Tx, error) {
	return nil, errors.New("lab catalogue: no transactions")
}

// QueryContext reads the row of the sku asked for.
func (c *catalogueConn) QueryContext(_ context.Context, _ string, args []driver.NamedValue) (driver.Rows, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("lab catalogue: want 1 argument, got %d", len(args))
	}
	sku, _ := args[0].Value.(string)
	row := make([]byte, catalogueRow)
	n, _ := strconv.Atoi(sku)
	row[0] = byte(n % 100)
	return &catalogueRows{row: row}, nil
}

type catalogueRows struct {
	row  []byte
	done bool
}

func (r *catalogueRows) Columns() []string { return []string{"row"} }
func (r *catalogueRows) Close() error      { return nil }
func (r *catalogueRows) Next(dest []driver.Value) error {
	if r.done {
		return io.EOF
	}
	r.done = true
	dest[0] = r.row
	return nil
}

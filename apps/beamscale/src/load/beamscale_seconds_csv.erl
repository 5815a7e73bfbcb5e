%% @doc A per-second handler (`beamscale_seconds') that appends a CSV file's rows each second:
%% load.csv (`beamscale_load_results:csv_row/1') and errors.csv (`errors_rows/1').
-module(beamscale_seconds_csv).
-behaviour(beamscale_seconds).

-export([start/3, second/2, stop/1]).

-type rows() :: fun((beamscale_load_run:row()) -> [[term()]]).

%% @doc Create `File' with its header line; `Rows' gives a second's rows.
-spec start(file:filename(), [atom() | binary()], rows()) -> {file:io_device(), rows()}.
start(File, Header, Rows) ->
    {ok, Fd} = file:open(File, [write]),
    ok = file:write(Fd, beamscale_format_csv:line(Header)),
    {Fd, Rows}.

%% @doc The second's rows, written as they come.
-spec second({file:io_device(), rows()}, beamscale_load_run:row()) -> ok.
second({Fd, Rows}, Row) -> file:write(Fd, [beamscale_format_csv:line(R) || R <- Rows(Row)]).

%% @doc The file closed.
-spec stop({file:io_device(), rows()}) -> ok.
stop({Fd, _}) -> file:close(Fd).

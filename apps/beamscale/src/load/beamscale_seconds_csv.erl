%% @doc A per-second handler (`beamscale_seconds') that appends a CSV file's rows each second:
%% load.csv (`beamscale_load_results:csv_row/1') and errors.csv (`errors_rows/1').
-module(beamscale_seconds_csv).
-behaviour(beamscale_seconds).

-export([start/3, second/2, stop/1]).

-type rows() :: fun((beamscale_load_run:row()) -> [[term()]]).

%% @doc Create `File' with its header line; `Rows' gives a second's rows.
%% A write that fails (a full disk, a read-only directory) names the file in words.
-spec start(file:filename(), [atom() | binary()], rows()) ->
    {{file:io_device(), file:filename()}, rows()}.
start(File, Header, Rows) ->
    Opened = file:open(File, [write]),
    ok = beamscale_format_file:written(Opened, File),
    {ok, Fd} = Opened,
    ok = beamscale_format_file:written(file:write(Fd, beamscale_format_csv:line(Header)), File),
    {{Fd, File}, Rows}.

%% @doc The second's rows, written as they come.
-spec second({{file:io_device(), file:filename()}, rows()}, beamscale_load_run:row()) -> ok.
second({{Fd, File}, Rows}, Row) ->
    beamscale_format_file:written(file:write(Fd, [beamscale_format_csv:line(R) || R <- Rows(Row)]),
                                  File).

%% @doc The file closed.
-spec stop({{file:io_device(), file:filename()}, rows()}) -> ok.
stop({{Fd, File}, _}) -> beamscale_format_file:written(file:close(Fd), File).

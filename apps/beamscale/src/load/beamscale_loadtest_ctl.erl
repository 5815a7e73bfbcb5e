%% @doc The control endpoint of a running load (`beamscale ctl', the live page's buttons): a
%% token made per run and written with the page's address into `DIR/ctl.json' (mode 0600: only
%% the user who ran the load can read it), `POST /control' on the load's web server
%% (`beamscale_web:control/3', 127.0.0.1 only) handed to `beamscale_load_run:control/1', and
%% each change appended to `DIR/events.csv' (`t_s,event') as it happens. `ctl.json' is removed
%% when the load ends.
-module(beamscale_loadtest_ctl).

-export([start/4, stop/1, on_event/2, parse/1, token/1]).
-export_type([throttle/0]).

%% What changes an amoc scenario's throttle (`ctl throttle NAME RATE', beamscale_loadtest_amoc):
%% its name as given and the rate per second; `{ok, Text}' or `{error, Text}' (refused).
-type throttle() :: fun((binary(), number()) -> {ok | error, iodata()}) | none.


%% @doc Make the run's token, write `ctl.json', and answer `POST /control' on `Web'; a live page
%% (`Page', the same server) gets the token for its buttons; `Throttle' answers `throttle NAME
%% RATE' (`none': the load has no throttles).
-spec start(beamscale_web:web(), file:filename(), beamscale_web:web() | none, throttle()) -> ok.
start(Web, Dir, Page, Throttle) ->
    Token = binary:encode_hex(beamscale_os:random_bytes(16)),
    File = beamscale_format_rundir:path(Dir, ctl),
    %% Made empty and private first: the token is never in a file others may read.
    ok = beamscale_format_file:written(file:write_file(File, <<>>), File),
    ok = file:change_mode(File, 8#600),
    Json = beamscale_format_json:encode(#{url => list_to_binary(beamscale_web:url(Web)),
                                          token => Token, os_pid => list_to_binary(os:getpid())}),
    ok = beamscale_format_file:written(file:write_file(File, Json), File),
    ok = beamscale_web:control(Web, Token, fun(Body) -> handle(Body, Throttle) end),
    _ = Page =:= none orelse beamscale_web_load:control(Page, Token),
    ok.

%% @doc The load is over: `ctl.json' goes (a later `ctl' says no load runs there).
-spec stop(file:filename()) -> ok.
stop(Dir) ->
    _ = file:delete(beamscale_format_rundir:path(Dir, ctl)),
    ok.

%% @doc The token of the load running in `Dir' and its page's address, from `ctl.json'.
-spec token(file:filename()) -> {ok, binary(), binary()} | {error, term()}.
token(Dir) ->
    case file:read_file(beamscale_format_rundir:path(Dir, ctl)) of
        {ok, Bin} ->
            case beamscale_format_json:decode(Bin) of
                {ok, #{<<"url">> := Url, <<"token">> := Token}} -> {ok, Url, Token};
                _ -> {error, bad_ctl_json}
            end;
        {error, Why} -> {error, Why}
    end.

%% @doc `beamscale_load_run''s `on_event': each change a row of `events.csv' (with its header
%% first), and a mark on the live page's charts (`Page', unless `none').
-spec on_event(file:filename(), beamscale_web:web() | none) ->
    fun((beamscale_load_run:event()) -> ok).
on_event(Dir, Page) ->
    File = beamscale_format_rundir:path(Dir, events),
    fun(#{t_s := T, event := E} = Event) ->
            _ = Page =:= none orelse beamscale_web_load:event(Page, Event),
            Header = [<<"t_s,event\n">> || not filelib:is_regular(File)],
            Row = beamscale_format_csv:line([float(T), E]),
            ok = beamscale_format_file:written(file:write_file(File, [Header, Row], [append]),
                                               File)
    end.

%% @doc A command's words (`status', `stop', `rate 50', `users +10', `users -3', `users 8',
%% `throttle NAME 20') as the load's command; `error' for anything else.
-spec parse(binary()) ->
    {ok, beamscale_load_run:command() | {throttle, binary(), number()}} | error.
parse(Body) ->
    case string:lexemes(string:trim(Body), " \t\r\n") of
        [<<"status">>] -> {ok, status};
        [<<"stop">>] -> {ok, stop};
        [<<"rate">>, R] ->
            case beamscale_format_csv:number(R) of
                V when is_number(V), V > 0 -> {ok, {rate, V}};
                _ -> error
            end;
        [<<"throttle">>, Name, R] ->
            case beamscale_format_csv:number(R) of
                V when is_number(V), V > 0 -> {ok, {throttle, Name, V}};
                _ -> error
            end;
        [<<"users">>, <<Sign, N/binary>>] when Sign =:= $+; Sign =:= $- ->
            case catch binary_to_integer(N) of
                K when is_integer(K), K > 0 -> {ok, {users, case Sign of $+ -> K; $- -> -K end}};
                _ -> error
            end;
        [<<"users">>, N] ->
            case catch binary_to_integer(N) of
                K when is_integer(K), K >= 0 -> {ok, {set_users, K}};
                _ -> error
            end;
        _ -> error
    end.

%%% Internals

handle(Body, Throttle) ->
    case parse(Body) of
        error -> {400, "expected status, stop, rate R (users/s, above 0), users +N, users -N, "
                       "users N or throttle NAME R (events/s, above 0)"};
        {ok, {throttle, _, _}} when Throttle =:= none -> {409, "this load has no throttles"};
        {ok, {throttle, Name, Rate}} ->
            case Throttle(Name, Rate) of
                {ok, Text} ->
                    %% A change as `rate' is: events.csv, summary.json's events, the pages.
                    Event = iolist_to_binary(["throttle ", Name, " ",
                                              beamscale_format_float:decimal(float(Rate))]),
                    case beamscale_load_run:control({event, Event}) of
                        {ok, _} -> {200, Text};
                        %% Changed on the nodes, but no run is left to record it: said.
                        {error, not_running} ->
                            {200, [Text, " (the load has ended: the change is not recorded)"]}
                    end;
                {error, Text} -> {409, Text}
            end;
        {ok, Command} ->
            case beamscale_load_run:control(Command) of
                {ok, #{error := Why}} -> {409, Why};
                {ok, #{ok := What}} -> {200, What};
                {ok, Status} -> {200, status_line(Status)};
                {error, not_running} -> {409, "no load is running"}
            end
    end.

status_line(#{t_s := T, phase := P, rate := R, users_in_flight := U, sessions_started := S,
              requests := Req, errors := E, stopping := Stopping} = St) ->
    io_lib:format("~.1f s, phase ~ts, rate ~ts users/s, users in flight ~b~ts, sessions "
                  "started ~b, requests ~b, errors ~b~ts",
                  [T, P, beamscale_format_float:decimal(float(R)), U, target(St),
                   S, Req, E, [", stopping (the drain)" || Stopping]]).

%% An externally_controlled phase's number of users set, and its bound.
target(#{users_target := U, max_users := Max}) ->
    io_lib:format(" (users set ~b of at most ~b)", [U, Max]);
target(_) -> "".

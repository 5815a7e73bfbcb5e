%% @doc `beamscale ctl DIR status | stop | rate R | users +N | -N | N | throttle NAME R':
%% steers the load running into `DIR' (`beamscale_loadtest_ctl'): reads the load's address and
%% token from `DIR/ctl.json' and POSTs the command to its `/control' on 127.0.0.1. Prints the
%% load's answer; exit 1 when the load refuses the command (the phases over, stopping, a phase it
%% does not steer, users above max_users, no such throttle), 2 when no load runs there.
-module(beamscale_cmd_ctl).
-behaviour(beamscale_cmd).

-export([info/0, do/1, format_error/1]).

-define(TIMEOUT_MS, 10000).

%% @doc This command's name, summary and options.
-spec info() -> beamscale_cmd:info().
info() ->
    #{name => "ctl", summary => "steer a running load: status, stop, rate, users, throttle",
      usage => "beamscale ctl DIR status | stop | rate R | users +N | users -N | users N | "
               "throttle NAME R",
      details => "DIR is the running load's directory (--out/--name). status: phase, rate,\n"
                 "users in flight; stop: as SIGTERM (arrivals stop, the drain, summary and\n"
                 "page written); rate R: users/s to the end of the current phase; users +N:\n"
                 "N users start now; users -N: N users in flight end; users N: the users an\n"
                 "externally_controlled phase keeps busy (at most its max_users; there +N\n"
                 "and -N move that number). throttle NAME R: an amoc scenario's throttle NAME\n"
                 "lets R events/s through from now (over all the load nodes, docs/amoc.md).\n"
                 "Changes are recorded in DIR/events.csv and marked on the page's graphs.",
      options => []}.

%% @doc Send the command to the load running in `DIR'.
-spec do(beamscale_args:parsed()) -> beamscale_cmd:outcome().
do(#{args := [Dir | Words]}) when Words =/= [] ->
    Command = iolist_to_binary(lists:join(" ", Words)),
    case beamscale_loadtest_ctl:parse(Command) of
        error -> {error, {bad_command, Command}};
        {ok, _} ->
            case beamscale_loadtest_ctl:token(Dir) of
                {ok, Url, Token} -> post(Dir, Url, Token, Command);
                {error, Why} -> {error, {not_running, Dir, Why}}
            end
    end;
do(#{args := _}) -> {error, usage}.

%% @doc One line for this command's errors.
-spec format_error(term()) -> iodata().
format_error(usage) ->
    "usage: beamscale ctl DIR status | stop | rate R | users +N | users -N | users N | "
    "throttle NAME R";
format_error({bad_command, C}) ->
    ["not a command: ", C, " (status, stop, rate R with R above 0, users +N, users -N, users N, "
     "throttle NAME R with R above 0)"];
format_error({not_running, Dir, enoent}) ->
    [Dir, ": no load is running there (no ctl.json)"];
format_error({not_running, Dir, Why}) ->
    io_lib:format("~ts: no load is running there (~0tp)", [Dir, Why]);
format_error({http, Dir, Why}) ->
    io_lib:format("~ts: the load did not answer (~0tp): it may have ended", [Dir, Why]);
format_error({status, Dir, Status, Body}) ->
    io_lib:format("~ts: the load answered ~b: ~ts", [Dir, Status, string:trim(Body)]).

%%% Internals

post(Dir, Url, Token, Command) ->
    #{port := Port} = uri_string:parse(Url),
    Request = [<<"POST /control HTTP/1.1\r\nHost: 127.0.0.1:">>, integer_to_binary(Port),
               <<"\r\nX-Beamscale-Token: ">>, Token, <<"\r\nContent-Length: ">>,
               integer_to_binary(byte_size(Command)), <<"\r\nConnection: close\r\n\r\n">>,
               Command],
    case exchange(Port, Request) of
        {ok, 200, Body} -> io:put_chars(Body);
        {ok, 409, Body} -> {failed, string:trim(Body)};
        {ok, Status, Body} -> {error, {status, Dir, Status, Body}};
        {error, Why} -> {error, {http, Dir, Why}}
    end.

%% One request on a fresh connection, the answer read to its close.
exchange(Port, Request) ->
    case gen_tcp:connect({127, 0, 0, 1}, Port, [binary, {active, false}], ?TIMEOUT_MS) of
        {ok, Sock} ->
            try
                ok = gen_tcp:send(Sock, Request),
                response(read_all(Sock, <<>>))
            after gen_tcp:close(Sock)
            end;
        {error, _} = Error -> Error
    end.

read_all(Sock, Acc) ->
    case gen_tcp:recv(Sock, 0, ?TIMEOUT_MS) of
        {ok, Data} -> read_all(Sock, <<Acc/binary, Data/binary>>);
        {error, closed} -> {ok, Acc};
        {error, _} = Error -> Error
    end.

response({ok, Bin}) ->
    case {binary:split(Bin, <<"\r\n\r\n">>), Bin} of
        {[Head, Body], <<"HTTP/1.1 ", Code:3/binary, _/binary>>} when Head =/= Bin ->
            {ok, binary_to_integer(Code), Body};
        _ -> {error, {bad_answer, Bin}}
    end;
response(Error) -> Error.

%% @doc Tsung's `<monitor type="munin">': a host read through munin-node's text protocol
%% (banner line; `list'; `fetch PLUGIN' and `config PLUGIN' answered by lines ending with a
%% `.' line), its `cpu', `load' and `memory' plugins turned into the text of the `/proc' files
%% `beamscale_host_calc' reads, so its rows are a host's rows (docs/samples.md). Bounded: a line
%% of at most ?MAX_LINE bytes, ?MAX_LINES lines an answer, one deadline for the whole reading.
-module(beamscale_munin).

-export([read/3, format_error/1]).

-define(MAX_LINE, 4096).
-define(MAX_LINES, 1000).
-define(PLUGINS, [<<"cpu">>, <<"load">>, <<"memory">>]).
%% munin's cpu plugin names /proc/stat's modes, in its order.
-define(MODES, [user, nice, system, idle, iowait, irq, softirq, steal]).

%% @doc One reading of munin-node at `Host':`Port' within `Timeout' ms: the text of the
%% `/proc' files its plugins stand for (`stat', `loadavg', `meminfo'; the others empty).
-spec read(string(), inet:port_number(), pos_integer()) ->
    {ok, #{files := #{atom() => binary()}, procs := []}} | {error, {?MODULE, term()}}.
read(Host, Port, Timeout) ->
    Deadline = erlang:monotonic_time(millisecond) + Timeout,
    %% A line longer than the buffer comes in pieces: a piece without its end is refused.
    case gen_tcp:connect(Host, Port, [binary, {active, false}, {packet, line},
                                      {buffer, ?MAX_LINE}], Timeout) of
        {ok, S} ->
            try session(S, Deadline)
            catch throw:Why -> {error, {?MODULE, Why}}
            after gen_tcp:close(S)
            end;
        {error, Why} -> {error, {?MODULE, {connect, Why}}}
    end.

%% @doc One line for this module's errors.
-spec format_error(term()) -> iodata().
format_error({?MODULE, R}) -> format_error(R);
format_error({connect, Why}) -> ["munin-node: cannot connect: ", inet:format_error(Why)];
format_error(Why) -> io_lib:format("munin-node: ~0tp", [Why]).

session(S, Deadline) ->
    _Banner = line(S, Deadline),
    Listed = string:lexemes(ask(S, <<"list">>, Deadline), " \n"),
    Has = fun(P) -> lists:member(P, Listed) end,
    Values = maps:from_list([{P, values(answer(S, <<"fetch ", P/binary>>, Deadline))}
                             || P <- ?PLUGINS, Has(P)]),
    Limits = maps:from_list([{P, upper_limit(answer(S, <<"config ", P/binary>>, Deadline))}
                             || P <- [<<"cpu">>, <<"memory">>], Has(P)]),
    ok = gen_tcp:send(S, <<"quit\n">>),
    {ok, #{files => files(Values, Limits), procs => []}}.

files(Values, Limits) ->
    Get = fun(P) -> maps:get(P, Values, #{}) end,
    #{stat => stat(Get(<<"cpu">>), maps:get(<<"cpu">>, Limits, none)),
      loadavg => case Get(<<"load">>) of
                     #{<<"load">> := L} -> <<"- ", L/binary, " -\n">>;
                     _ -> <<>>
                 end,
      meminfo => meminfo(Get(<<"memory">>), maps:get(<<"memory">>, Limits, none)),
      netdev => <<>>, diskstats => <<>>}.

%% A /proc/stat with the `cpu' line of the plugin's counters (jiffies) and one `cpuN' line per
%% core: the plugin's graph goes up to 100 % per core.
stat(Cpu, _) when map_size(Cpu) =:= 0 -> <<>>;
stat(Cpu, Limit) ->
    Cores = case Limit of
                N when is_integer(N), N >= 100 -> N div 100;
                _ -> 1
            end,
    iolist_to_binary([<<"cpu ">>, [[$\s, maps:get(atom_to_binary(M), Cpu, <<"0">>)]
                                   || M <- ?MODES], $\n,
                      [io_lib:format("cpu~b 0\n", [I]) || I <- lists:seq(0, Cores - 1)]]).

%% Available: free, buffers and cached; the total: the plugin's graph's upper limit.
meminfo(Mem, Total) ->
    Kb = fun(B) -> integer_to_binary(B div 1024) end,
    Avail = lists:sum([int(maps:get(K, Mem, <<"0">>)) || K <- [<<"free">>, <<"buffers">>,
                                                              <<"cached">>]]),
    iolist_to_binary([[["MemTotal: ", Kb(Total), " kB\n"] || is_integer(Total)],
                      [["MemAvailable: ", Kb(Avail), " kB\n"] || is_map_key(<<"free">>, Mem)]]).

values(Lines) ->
    maps:from_list([{Field, V} || L <- Lines, [Key, V] <- [string:lexemes(L, " \n")],
                                  [Field, <<"value">>] <- [binary:split(Key, <<".">>)]]).

upper_limit(Lines) ->
    case [L || <<"graph_args ", L/binary>> <- Lines] of
        [Args | _] ->
            case re:run(Args, "--upper-limit\\s+(\\d+)", [{capture, [1], binary}]) of
                {match, [N]} -> binary_to_integer(N);
                nomatch -> none
            end;
        [] -> none
    end.

ask(S, Command, Deadline) ->
    ok = gen_tcp:send(S, [Command, $\n]),
    line(S, Deadline).

%% An answer: lines up to the `.' line (a `#' line is munin's error: no figures).
answer(S, Command, Deadline) ->
    ok = gen_tcp:send(S, [Command, $\n]),
    lines(S, Deadline, 0, []).

lines(_S, _Deadline, ?MAX_LINES, _Acc) -> throw({answer_over, ?MAX_LINES, lines});
lines(S, Deadline, N, Acc) ->
    case line(S, Deadline) of
        <<".\n">> -> lists:reverse(Acc);
        <<"#", _/binary>> -> lines(S, Deadline, N + 1, Acc);
        L -> lines(S, Deadline, N + 1, [L | Acc])
    end.

line(S, Deadline) ->
    case gen_tcp:recv(S, 0, max(0, Deadline - erlang:monotonic_time(millisecond))) of
        {ok, L} when byte_size(L) >= ?MAX_LINE, binary_part(L, byte_size(L), -1) =/= <<"\n">> ->
            throw({line_over, ?MAX_LINE});
        {ok, L} -> L;
        {error, Why} -> throw(Why)
    end.

int(B) ->
    case string:to_integer(B) of
        {N, _} when is_integer(N) -> N;
        _ -> 0
    end.

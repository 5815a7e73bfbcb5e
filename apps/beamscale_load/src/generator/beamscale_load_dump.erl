%% @doc A bounded dump of requests and replies (`--dump N', Tsung's `dumptraffic'): the first N
%% exchanges of a run (all users together) and the first exchange of every error reason (at
%% most ?MAX_REASONS of them), written by one process to `dump.log', the bytes of each
%% direction cut at ?LIMIT.
%%
%% Users pay little: an agent's `atomics' say whether a slot may still be free; only then does a
%% user keep the bytes of its request (the kinds' `capture/2' calls, at the byte counts of
%% `beamscale_load_tcp' and `beamscale_load_reader': one dictionary read otherwise). Each agent
%% bounds its own entries so; the writer bounds the run's, over every load node.
-module(beamscale_load_dump).

-export([open/2, close/1, handle/2, arm/1, capture/2, done/3, format/2, escape/1,
         format_error/1]).
-export_type([dump/0, entry/0]).

%% The most distinct error reasons dumped.
-define(MAX_REASONS, 64).
%% The bytes kept of each direction of an exchange.
-define(LIMIT, 2048).
-define(CAPTURE, '$beamscale_load_dump_capture').
-define(FULL, '$beamscale_load_dump_full').
-define(CLOSE_TIMEOUT, 10000).

%% An agent's view: the run's writer, N, its slots taken (1: exchanges, 2: error reasons; 3 is 1
%% once both are taken: one read then tells a user there is nothing left) and the reasons seen.
-type dump() :: #{writer := pid(), n := non_neg_integer(), slots := atomics:atomics_ref(),
                  reasons := ets:tid()}.
%% One exchange: when (system time, µs), the user, kind, request name, the bytes (kept, and how
%% many there were) and the outcome.
-type entry() :: #{at_us := integer(), user := non_neg_integer(), kind := atom(),
                   name := binary() | none, sent := {binary(), non_neg_integer()},
                   received := {binary(), non_neg_integer()}, reason := ok | binary()}.

%% @doc Start the writer of `File' for `N' exchanges plus the error reasons' first ones.
-spec open(file:filename(), non_neg_integer()) -> {ok, pid()} | {error, {?MODULE, term()}}.
open(File, N) ->
    Self = self(),
    Pid = spawn(fun() -> writer_init(Self, File, N) end),
    Ref = monitor(process, Pid),
    receive
        {Pid, Reply} -> demonitor(Ref, [flush]), Reply;
        {'DOWN', Ref, process, Pid, R} -> {error, {?MODULE, R}}
    end.

%% @doc Stop the writer once it has written what it was sent.
-spec close(pid()) -> ok.
close(Pid) ->
    Ref = monitor(process, Pid),
    Pid ! {close, self()},
    receive {'DOWN', Ref, process, Pid, _} -> ok
    after ?CLOSE_TIMEOUT -> exit(Pid, kill), ok
    end.

%% @doc An agent's handle on the run's writer (its counters and reason table are the agent's).
-spec handle(pid(), non_neg_integer()) -> dump().
handle(Writer, N) ->
    #{writer => Writer, n => N, slots => atomics:new(3, []),
      reasons => ets:new(?MODULE, [set, public, {write_concurrency, true}])}.

%% @doc Before a request: keep its bytes if a slot may still be free.
-spec arm(dump() | none) -> boolean().
arm(none) -> false;
arm(#{n := N, slots := A}) ->
    %% A user that found the dump full remembers it: an `atomics' read costs a call (about
    %% 85 ns here), a dictionary read is inlined (2 ns).
    get(?FULL) =:= undefined andalso
        case atomics:get(A, 3) =:= 0 andalso
            (atomics:get(A, 1) < N orelse atomics:get(A, 2) < ?MAX_REASONS) of
            true -> put(?CAPTURE, {[], 0, [], 0}), true;
            false -> atomics:put(A, 3, 1), put(?FULL, true), false
        end.

%% @doc Bytes the calling user sent or received, kept (up to the limit) if it is armed.
-spec capture(sent | received, iodata()) -> ok.
capture(Dir, Bytes) ->
    case get(?CAPTURE) of
        undefined -> ok;
        {S, SN, R, RN} ->
            Size = iolist_size(Bytes),
            put(?CAPTURE, case Dir of
                              sent -> {keep(S, SN, Bytes, Size), SN + Size, R, RN};
                              received -> {S, SN, keep(R, RN, Bytes, Size), RN + Size}
                          end),
            ok
    end.

%% Bytes within the limit are kept as they are (a reference, no copy); only the part across it
%% is copied, cut.
keep(Kept, Had, _Bytes, _Size) when Had >= ?LIMIT -> Kept;
keep(Kept, Had, Bytes, Size) when Had + Size =< ?LIMIT -> [Kept, Bytes];
keep(Kept, Had, Bytes, _Size) ->
    [Kept, binary:part(iolist_to_binary(Bytes), 0, ?LIMIT - Had)].

%% @doc After a request: its exchange goes to the writer if it takes a slot (one of the first N,
%% or its error reason's first). The user's number, the kind's module and the send's monotonic
%% time (native units).
-spec done(dump() | none, {non_neg_integer(), module(), integer()},
           beamscale_load_request:result()) -> ok.
done(none, _Info, _Result) -> ok;
done(Dump, {User, Mod, Send}, Result) ->
    %% `get' first: a read is inlined, an `erase' is a call (50 against 2 ns).
    case get(?CAPTURE) =/= undefined andalso erase(?CAPTURE) of
        false -> ok;
        {S, SN, R, RN} ->
            Reason = reason(Result),
            case take(Dump, Reason) of
                true ->
                    At = erlang:convert_time_unit(Send + erlang:time_offset(), native,
                                                  microsecond),
                    Entry = #{at_us => At, user => User, kind => Mod:name(),
                              name => beamscale_load_byname:current(), reason => Reason,
                              sent => {iolist_to_binary(S), SN},
                              received => {iolist_to_binary(R), RN}},
                    maps:get(writer, Dump) ! {entry, Entry},
                    ok;
                false -> ok
            end
    end.

reason({ok, _}) -> ok;
reason({ok, _, _}) -> ok;
reason({error, Reason, _}) -> beamscale_load_reasons:text(Reason);
reason({error, Reason, _, _}) -> beamscale_load_reasons:text(Reason).

%% One of the first N, else an error whose reason is new while reasons are left.
take(#{n := N, slots := A, reasons := T}, Reason) ->
    First = atomics:get(A, 1) < N andalso atomics:add_get(A, 1, 1) =< N,
    New = Reason =/= ok andalso atomics:get(A, 2) < ?MAX_REASONS
        andalso ets:insert_new(T, {Reason}),
    _ = New andalso atomics:add(A, 2, 1),
    First orelse New.

writer_init(Parent, File, N) ->
    case file:open(File, [write, raw, binary, delayed_write]) of
        {ok, Fd} ->
            Parent ! {self(), {ok, self()}},
            %% Its opener gone (killed before `close/1'), the writer goes too.
            _ = monitor(process, Parent),
            writer(Fd, #{n => N, taken => 0, seen => #{}, written => 0});
        {error, R} -> Parent ! {self(), {error, {?MODULE, {open, File, R}}}}
    end.

%% `taken': the first exchanges written; `seen': the error reasons written.
writer(Fd, #{n := N, taken := Taken, seen := Seen, written := W} = St) ->
    receive
        {entry, #{reason := Reason} = E} ->
            First = Taken < N,
            New = Reason =/= ok andalso not is_map_key(Reason, Seen)
                andalso map_size(Seen) < ?MAX_REASONS,
            case First orelse New of
                true ->
                    ok = file:write(Fd, format(W + 1, E)),
                    writer(Fd, St#{taken := Taken + min(1, N - Taken), written := W + 1,
                                   seen := seen(Reason, Seen)});
                false -> writer(Fd, St)
            end;
        {close, _} -> ok = file:close(Fd);
        {'DOWN', _, process, _, _} -> ok = file:close(Fd)
    end.

%% @doc The text of this module's errors.
-spec format_error(term()) -> iodata().
format_error({?MODULE, R}) -> format_error(R);
format_error({open, File, R}) ->
    io_lib:format("cannot write ~ts: ~ts", [File, file:format_error(R)]);
format_error(R) -> io_lib:format("~0tp", [R]).

seen(ok, Seen) -> Seen;
seen(Reason, Seen) when map_size(Seen) < ?MAX_REASONS -> Seen#{Reason => true};
seen(_Reason, Seen) -> Seen.

%% @doc The text of exchange number `I' in `dump.log'.
-spec format(pos_integer(), entry()) -> iodata().
format(I, #{at_us := At, user := U, kind := K, name := Name, reason := Reason,
            sent := Sent, received := Received}) ->
    Time = calendar:system_time_to_rfc3339(At, [{unit, microsecond}, {offset, "Z"}]),
    [io_lib:format("=== #~b ~ts user ~b ~ts ~ts: ~ts~n",
                   [I, Time, U, K, case Name of none -> "-"; _ -> Name end,
                    case Reason of ok -> "ok"; _ -> ["error: ", Reason] end]),
     bytes(">>> sent", Sent), bytes("<<< received", Received), "\n"].

bytes(Label, {Kept, Size}) ->
    Cut = case Size > byte_size(Kept) of
              true -> io_lib:format(" (first ~b shown)", [byte_size(Kept)]);
              false -> ""
          end,
    [io_lib:format("~ts ~b bytes~ts~n", [Label, Size, Cut]),
     case Kept of <<>> -> []; _ -> [escape(Kept), "\n"] end].

%% @doc Bytes as printable text: ASCII as is, a line feed ends a line (shown as `\n'), other
%% bytes escaped (`\r', `\t', `\\', `\xHH').
-spec escape(binary()) -> binary().
escape(B) -> << <<(char(C))/binary>> || <<C>> <= B >>.

char($\n) -> <<"\\n\n">>;
char($\r) -> <<"\\r">>;
char($\t) -> <<"\\t">>;
char($\\) -> <<"\\\\">>;
char(C) when C >= 32, C < 127 -> <<C>>;
char(C) -> iolist_to_binary(io_lib:format("\\x~2.16.0B", [C])).

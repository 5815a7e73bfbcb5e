%% @doc The `fs' request kind, Tsung's `ts_fs': file system operations in a directory the
%% scenario names (a target `#{dir => Path}'), each a request with its latency and its bytes
%% (`bytes_sent' written, `bytes_received' read). The user's "connection" is its open file:
%% `open' (read or write) then `write_chunk' and `read_chunk' at the file's position (or at a
%% `position' given), `close'; and on paths: `make_dir' (an existing directory is no error, as
%% in Tsung), `del_dir', `delete', `read_file', `write_file' (from a `position' too), `stat',
%% `copy' (a file to `dest').
%%
%% Bounded: a path is relative to the target's directory and, once its placeholders are filled,
%% may not leave its static part (`base', the directory the scenario wrote): `..' or a symbolic
%% link out of it is the error `escape'. Sizes are at most ?MAX_SIZE; `read_file' reads at most
%% the target's `max_reply_bytes', as does one `read_chunk'. Only regular files are opened, read
%% or written (a FIFO, a device, a directory: `not a regular file: FIFO'), so no call waits
%% without end. A file call is not cut at the request's deadline (the emulator cannot
%% interrupt one): its latency says how long it took; a `copy' goes in chunks and stops at the
%% deadline between two.
-module(beamscale_load_fs).
-behaviour(beamscale_load_request).

-export([check/2, connect/1, request/3, close/1]).
-export([name/0, features/0, sockets/1, format_error/1, tsung/0, from_tsung/3]).
-export_type([conn/0]).

-include_lib("kernel/include/file.hrl").
-include_lib("xmerl/include/xmerl.hrl").

-import(beamscale_load_tsung_dom, [check_attrs/2, attr/3, req/3, fail/4]).

%% The target's directory, its read bound, and the open file with its position.
-type conn() :: {fs, string(), pos_integer(), {file:io_device(), non_neg_integer()} | none}.

-define(MAX_SIZE, 64 * 1024 * 1024).
%% A file offset: 1 PiB, beyond any file a test writes, within every file system's limit.
-define(MAX_POSITION, 1 bsl 50).
%% A copy reads and writes this much at a time, and looks at its deadline between two.
-define(COPY_CHUNK, 65536).
-define(PATH_OPS, [make_dir, del_dir, delete, read_file, write_file, stat, open, copy]).
-define(KEYS, #{make_dir => [path, base], del_dir => [path, base], delete => [path, base],
                read_file => [path, base, position], write_file => [path, base, size, position],
                stat => [path, base], open => [path, base, mode], close => [],
                copy => [path, base, dest],
                read_chunk => [size, position], write_chunk => [size, position]}).

%% @doc `#{type => make_dir | open | write_chunk | read_chunk | close | read_file | write_file |
%% del_dir | delete | stat | copy, path => P, base => B, mode => read | write, size => N,
%% position => Offset, dest => P}' against a `#{dir => Path}' target (docs/scenario.md, "fs").
-spec check(map(), beamscale_load_scenario:target()) -> {ok, map()} | {error, atom(), string()}.
check(Spec, #{dir := _}) -> beamscale_load_request:check_typed(Spec, ?KEYS, fun spec/2);
check(_Spec, _Target) -> {error, target, "fs needs a #{dir => Path} target"}.

spec(Type, S) ->
    Path = case lists:member(Type, ?PATH_OPS) of
               true -> #{path => path(path, S), base => base(S)};
               false -> #{}
           end,
    Extra = maps:from_list([{dest, path(dest, S)} || Type =:= copy]
                           ++ [{position, position(P)} || #{position := P} <- [S]]),
    Size = case Type of
               T when T =:= write_file; T =:= read_chunk; T =:= write_chunk -> size(T, S);
               _ -> #{}
           end,
    Mode = case {Type, maps:get(mode, S, read)} of
               {open, M} when M =:= read; M =:= write -> #{mode => M};
               {open, _} -> bad(mode, "expected read or write");
               _ -> #{}
           end,
    maps:merge(maps:merge(maps:merge(Path, Size), Extra), Mode#{type => Type}).

path(Key, S) when is_map_key(Key, S) ->
    try unicode:characters_to_list(maps:get(Key, S)) of
        L when is_list(L) -> L;
        _ -> bad(Key, "expected a string")
    catch error:badarg -> bad(Key, "expected a string")
    end;
path(Key, _) -> bad(Key, "missing").

position(N) when is_integer(N), N >= 0, N =< ?MAX_POSITION -> N;
position(_) -> bad(position, "expected a byte offset from 0 to 2^50").

base(S) ->
    B = unicode:characters_to_list(maps:get(base, S, "")),
    case B =:= "" orelse filelib:safe_relative_path(B, "/") =/= unsafe of
        true -> B;
        false -> bad(base, "expected a relative path that stays in the target's directory")
    end.

size(_Type, #{size := N}) when is_integer(N), N >= 0, N =< ?MAX_SIZE -> #{size => N};
size(_Type, #{size := _}) -> bad(size, "expected bytes from 0 to 64 MiB");
size(_Type, _) -> bad(size, "missing").

-spec bad(atom(), string()) -> no_return().
bad(Key, Msg) -> throw({bad, Key, Msg}).

%% @doc Nothing to open: the directory is checked by the first operation.
-spec connect(map()) -> {ok, conn()}.
connect(#{dir := Dir} = T) ->
    {ok, {fs, Dir, maps:get(max_reply_bytes, T, beamscale_load_reader:default_max()), none}}.

%% @doc One file system operation.
-spec request(map(), conn(), pos_integer()) -> beamscale_load_request:result().
request(#{type := copy, dest := D} = Spec, {fs, Dir, Max, _} = Conn, Timeout) ->
    Deadline = erlang:monotonic_time(millisecond) + Timeout,
    case {full(Dir, Spec), full(Dir, Spec#{path := D})} of
        {{ok, From}, {ok, To}} -> result(copy, copy(From, To, Max, Deadline), Conn);
        {{ok, _}, Bad} -> {error, {?MODULE, {copy, Bad}}, Conn};
        {Bad, _} -> {error, {?MODULE, {copy, Bad}}, Conn}
    end;
request(#{type := Type} = Spec, {fs, Dir, Max, Open} = Conn, _Timeout) ->
    case full(Dir, Spec) of
        {ok, Path} -> result(Type, op(Spec, Path, Conn), Conn);
        none -> result(Type, op(Spec, none, Conn), Conn);
        Bad -> {error, {?MODULE, {Type, Bad}}, {fs, Dir, Max, Open}}
    end.

full(Dir, #{path := P, base := B}) ->
    Root = filename:join(Dir, B),
    case filename:pathtype(P) =:= relative andalso filelib:safe_relative_path(P, Root) of
        Empty when Empty =:= []; Empty =:= <<>> -> empty;
        Rel when is_list(Rel) -> {ok, filename:join(Root, Rel)};
        Bin when is_binary(Bin) -> {ok, filename:join(Root, Bin)};
        _ -> escape
    end;
full(_Dir, _Spec) -> none.

op(#{type := make_dir}, P, _) ->
    case file:make_dir(P) of
        {error, eexist} -> ok;
        R -> R
    end;
op(#{type := del_dir}, P, _) -> file:del_dir(P);
op(#{type := delete}, P, _) -> file:delete(P);
op(#{type := stat}, P, _) -> ok(file:read_file_info(P, [raw]));
op(#{type := read_file, position := Pos}, P, {fs, _, Max, _}) ->
    with_file(P, [read], fun(Fd) -> read_from(Fd, Pos, Max) end);
op(#{type := read_file}, P, {fs, _, Max, _}) ->
    case regular(P, read) of
        ok -> read_file(P, Max);
        E -> E
    end;
op(#{type := write_file, size := N, position := Pos}, P, _) ->
    %% Written at the offset, the rest of the file kept (not truncated as a whole write is).
    D = data(N),
    with_file(P, [read, write], fun(Fd) -> sent(file:pwrite(Fd, Pos, D), D) end);
op(#{type := write_file, size := N}, P, _) ->
    case regular(P, write) of
        ok -> D = data(N), sent(file:write_file(P, D, [raw]), D);
        E -> E
    end;
op(#{type := open, mode := M}, P, {fs, _, _, Open}) ->
    _ = close_open(Open),
    case regular(P, M) of
        ok -> opened(file:open(P, [M, raw, binary]));
        E -> E
    end;
op(#{type := close}, none, {fs, _, _, Open}) -> close_open(Open);
op(#{type := _}, none, {fs, _, _, none}) -> {error, no_file};
op(#{type := read_chunk, size := N}, none, {fs, _, Max, _}) when N > Max ->
    {error, {too_big, Max}};
op(#{type := read_chunk, size := N} = S, none, {fs, _, _, {Fd, At}}) ->
    Pos = maps:get(position, S, At),
    case file:pread(Fd, Pos, N) of
        {ok, Bin} -> ok = received(byte_size(Bin)), {open, {Fd, Pos + byte_size(Bin)}};
        eof -> {open, {Fd, 0}};
        E -> E
    end;
op(#{type := write_chunk, size := N} = S, none, {fs, _, _, {Fd, At}}) ->
    Pos = maps:get(position, S, At),
    D = data(N),
    case sent(file:pwrite(Fd, Pos, D), D) of
        ok -> {open, {Fd, Pos + byte_size(D)}};
        E -> E
    end.

opened({ok, Fd}) -> {open, {Fd, 0}};
opened(E) -> E.

%% A regular file (or one to make, when written) opened, used and closed.
with_file(P, Modes, Use) ->
    case regular(P, case Modes of [read] -> read; _ -> write end) of
        ok -> case file:open(P, [raw, binary | Modes]) of
                  {ok, Fd} -> try Use(Fd) after file:close(Fd) end;
                  E -> E
              end;
        E -> E
    end.

%% One byte more than the bound: a file grown past it is refused, never read whole.
read_from(Fd, Pos, Max) ->
    case file:pread(Fd, Pos, Max + 1) of
        {ok, Bin} when byte_size(Bin) > Max -> {error, {too_big, Max}};
        {ok, Bin} -> received(byte_size(Bin));
        eof -> ok;
        E -> E
    end.

%% A regular file to another (made, or emptied first), at most `max_reply_bytes' of it (its
%% bytes are counted read and written; a larger source is refused before the destination is
%% touched, one grown meanwhile is cut); past the request's deadline, a timeout between two
%% chunks (what was written stays).
copy(From, To, Max, Deadline) ->
    case {file:read_file_info(From, [raw]), regular(From, read), regular(To, write)} of
        {{ok, #file_info{size = Size}}, ok, _} when Size > Max -> {error, {too_big, Max}};
        {_, ok, ok} ->
            with_file(From, [read],
                      fun(In) -> with_file(To, [write],
                                           fun(Out) -> copy(In, Out, {0, Max, Deadline}) end)
                      end);
        {_, ok, E} -> E;
        {_, E, _} -> E
    end.

copy(In, Out, {Done, Max, Deadline}) ->
    case erlang:monotonic_time(millisecond) > Deadline of
        true -> {error, timeout};
        false ->
            case file:read(In, min(?COPY_CHUNK, Max - Done + 1)) of
                {ok, Bin} when Done + byte_size(Bin) > Max -> {error, {too_big, Max}};
                {ok, Bin} ->
                    ok = received(byte_size(Bin)),
                    case sent(file:write(Out, Bin), Bin) of
                        ok -> copy(In, Out, {Done + byte_size(Bin), Max, Deadline});
                        E -> E
                    end;
                eof -> ok;
                E -> E
            end
    end.

read_file(P, Max) ->
    case beamscale_format_file:read(P, Max) of
        {ok, Bin} -> received(byte_size(Bin));
        {error, {beamscale_format_file, {too_big, _, _}}} -> {error, {too_big, Max}};
        {error, {beamscale_format_file, {not_regular, Type}}} -> {error, {not_regular, Type}};
        {error, {beamscale_format_file, Why}} -> {error, Why}
    end.

%% Only a regular file is opened (a file to write may also not exist yet): a FIFO's open waits
%% for a writer, out of reach of the request's deadline and the run's time limit (a file call
%% cannot be cut), and a device (/dev/zero) never ends. Looked at just before the open: a file
%% swapped for a FIFO in between, in the scenario's own directory, is not guarded against.
regular(P, Mode) ->
    case {file:read_file_info(P, [raw]), Mode} of
        {{ok, #file_info{type = regular}}, _} -> ok;
        {{ok, #file_info{mode = Bits}}, _} -> {error, {not_regular, type(Bits)}};
        {{error, enoent}, write} -> ok;
        {{error, _} = E, _} -> E
    end.

%% The file's type from its mode's bits, as `ls -l' would tell it.
type(Bits) ->
    case Bits band 8#170000 of
        8#010000 -> 'FIFO';
        8#020000 -> 'character device';
        8#040000 -> directory;
        8#060000 -> 'block device';
        8#140000 -> socket;
        _ -> other
    end.

%% Random bytes (as Tsung writes), made once per size on a load node and shared by its users: a
%% persistent term, read without a copy; written once per size (its global GC then is rare).
data(N) ->
    case persistent_term:get({?MODULE, N}, undefined) of
        undefined ->
            D = crypto:strong_rand_bytes(N),
            persistent_term:put({?MODULE, N}, D),
            D;
        D -> D
    end.

close_open(none) -> ok;
close_open({Fd, _}) -> file:close(Fd).

ok({ok, _}) -> ok;
ok(E) -> E.

received(N) -> beamscale_load_request:count(bytes_received, N).

sent(ok, D) -> beamscale_load_request:count(bytes_sent, byte_size(D));
sent(E, _D) -> E.

result(close, ok, {fs, D, M, _}) -> {ok, {fs, D, M, none}};
result(copy, {error, timeout}, Conn) -> {error, timeout, Conn};
result(_Type, ok, Conn) -> {ok, Conn};
result(_Type, {open, F}, {fs, D, M, _}) -> {ok, {fs, D, M, F}};
result(close, {error, R}, {fs, D, M, _}) -> {error, {?MODULE, {close, R}}, {fs, D, M, none}};
result(Type, {error, R}, Conn) -> {error, {?MODULE, {Type, R}}, Conn}.

%% @doc Close the user's open file, if any.
-spec close(conn()) -> ok.
close({fs, _, _, Open}) -> _ = close_open(Open), ok.

%% @doc The kind's step name.
-spec name() -> fs.
name() -> fs.

%% @doc Placeholders in its Tsung element's path (Tsung's `subst').
-spec features() -> [beamscale_load_request:feature()].
features() -> [subst].

%% @doc No socket (one file descriptor while a file is open).
-spec sockets(map()) -> 1.
sockets(_Target) -> 1.

%% @doc The text of its reasons: the operation and the file error in words.
-spec format_error(term()) -> iodata().
format_error({?MODULE, R}) -> format_error(R);
format_error({Op, escape}) ->
    io_lib:format("fs ~ts: path outside its directory (.. or a link out of it)", [Op]);
format_error({Op, empty}) -> io_lib:format("fs ~ts: empty path (the directory itself)", [Op]);
format_error({Op, no_file}) -> io_lib:format("fs ~ts: no file open", [Op]);
format_error({read_chunk, {too_big, Max}}) ->
    io_lib:format("fs read_chunk: size above max_reply_bytes (~b)", [Max]);
format_error({Op, {too_big, Max}}) ->
    io_lib:format("fs ~ts: file above max_reply_bytes (~b)", [Op, Max]);
format_error({Op, {not_regular, Type}}) ->
    io_lib:format("fs ~ts: not a regular file: ~ts", [Op, Type]);
format_error({Op, Why}) -> io_lib:format("fs ~ts: ~ts", [Op, file:format_error(Why)]).

%% @doc Tsung's `ts_fs' sessions and their `<fs>' element; the `<server>' is not used.
-spec tsung() -> beamscale_load_request:tsung().
tsung() -> #{type => "ts_fs", element => fs, servers => ["erlang", "tcp"],
             attributes => [cmd, path, mode, size, position, dest]}.

%% @doc An `<fs cmd path mode size position dest>' element: Tsung's commands (`read' is
%% `read_file', `write' is `write_file'). Its absolute path is split at its last `/' before a
%% placeholder (for `copy', of the path and `dest' both): the static directory is the `base' no
%% substituted value may leave, under a target `fs' of directory `/'.
-spec from_tsung(#xmlElement{}, #xmlElement{}, map()) -> {map(), [{atom(), map()}]}.
from_tsung(_Req, E, Ctx) ->
    check_attrs(E, Ctx),
    Type = case req(E, cmd, Ctx) of
               "read" -> read_file;
               "write" -> write_file;
               C -> case [T || T <- maps:keys(?KEYS), atom_to_list(T) =:= C] of
                        [T] -> T;
                        [] -> fail(E, Ctx, "cmd=\"~ts\" (expected make_dir, open, write_chunk, "
                                           "read_chunk, close, read, write, del_dir, delete, "
                                           "stat or copy)", [C])
                    end
           end,
    Keys = maps:get(Type, ?KEYS),
    Spec = maps:from_list(
             [{type, Type}]
             ++ [{mode, list_to_atom(attr(E, mode, "read"))}
                 || lists:member(mode, Keys),
                    lists:member(attr(E, mode, "read"), ["read", "write"])]
             ++ [{size, integer(E, size, Ctx)} || lists:member(size, Keys)]
             ++ [{position, integer(E, position, Ctx)}
                 || lists:member(position, Keys), attr(E, position, undefined) =/= undefined]
             ++ split(E, Keys, Ctx)),
    Target = #{dir => "/"},
    case check(Spec, Target) of
        {ok, _} -> {Spec#{target => fs}, [{fs, Target}]};
        {error, Key, Msg} -> fail(E, Ctx, "~ts: ~ts", [Key, Msg])
    end.

split(E, Keys, Ctx) ->
    case lists:member(path, Keys) of
        false -> [];
        true ->
            Names = [path | [dest || lists:member(dest, Keys)]],
            Paths = [{K, absolute(E, K, Ctx)} || K <- Names],
            %% The directories (as components) each path's static part is in; `base' is the
            %% longest they share.
            Dirs = [lists:droplast(string:split(element(1, string:take(P, "%", true)), "/",
                                                all)) || {_, P} <- Paths],
            Base = common(Dirs),
            [{base, lists:flatten(lists:join("/", tl(Base)))}
             | [{K, string:slice(P, length(lists:flatten(lists:join("/", Base))) + 1)}
                || {K, P} <- Paths]]
    end.

absolute(E, Key, Ctx) ->
    case req(E, Key, Ctx) of
        "/" ++ _ = P -> P;
        P -> fail(E, Ctx, "~ts=\"~ts\": expected an absolute path", [Key, P])
    end.

common(Dirs) ->
    case lists:member([], Dirs) orelse lists:usort([hd(D) || D <- Dirs]) of
        [C] -> [C | common([tl(D) || D <- Dirs])];
        _ -> []
    end.

integer(E, Key, Ctx) ->
    V = attr(E, Key, "0"),
    try list_to_integer(string:trim(V))
    catch error:badarg -> fail(E, Ctx, "~ts=\"~ts\" (expected an integer)", [Key, V])
    end.

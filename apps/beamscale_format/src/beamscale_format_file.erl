%% @doc Reading an input file (scenario, Tsung file, data file, config) within bounds whatever
%% it is: only a regular file is opened (a symlink to /dev/zero, a FIFO or a directory is
%% refused before it is opened, so nothing waits or grows), and at most `Max' bytes are read.
-module(beamscale_format_file).

-export([read/2, written/2, format_error/1]).

%% @doc The contents of the regular file `File', at most `Max' bytes; `{error, Reason}' (see
%% `format_error/1') when it is not a regular file, is larger, or cannot be read.
-spec read(file:filename(), pos_integer()) -> {ok, binary()} | {error, {?MODULE, term()}}.
read(File, Max) ->
    %% read_file_info follows symlinks: the type is that of the file read.
    case file:read_file_info(File) of
        {ok, {file_info, Size, regular, _, _, _, _, _, _, _, _, _, _, _}} when Size > Max ->
            {error, {?MODULE, {too_big, Size, Max}}};
        {ok, {file_info, _, regular, _, _, _, _, _, _, _, _, _, _, _}} -> read_at_most(File, Max);
        {ok, {file_info, _, Type, _, _, _, _, _, _, _, _, _, _, _}} ->
            {error, {?MODULE, {not_regular, Type}}};
        {error, Reason} -> {error, {?MODULE, Reason}}
    end.

%% The file may have grown or been swapped since it was looked at: read one byte more than the
%% bound, never the whole of whatever it now is.
read_at_most(File, Max) ->
    case file:open(File, [read, raw, binary]) of
        {ok, Fd} ->
            try file:read(Fd, Max + 1) of
                {ok, Bin} when byte_size(Bin) > Max -> {error, {?MODULE, {too_big, more, Max}}};
                {ok, Bin} -> {ok, Bin};
                eof -> {ok, <<>>};
                {error, Reason} -> {error, {?MODULE, Reason}}
            after
                file:close(Fd)
            end;
        {error, Reason} -> {error, {?MODULE, Reason}}
    end.

%% @doc `ok' when a write of `File' (or the making of its directory) succeeded; otherwise an
%% exception `{beamscale_format_file, {write, File, Reason}}', which the command line says in one
%% line naming the file ("no space left on device"), not as `{badmatch, {error, enospc}}'.
-spec written(ok | {ok, term()} | {error, term()}, file:filename()) -> ok.
written(ok, _File) -> ok;
written({ok, _}, _File) -> ok;
written({error, Reason}, File) -> error({?MODULE, {write, File, Reason}}).

%% @doc The reason, in words.
-spec format_error({?MODULE, term()} | term()) -> string().
format_error({?MODULE, R}) -> format_error(R);
format_error({too_big, more, Max}) ->
    lists:flatten(io_lib:format("more than ~b bytes: refused", [Max]));
format_error({too_big, Size, Max}) ->
    lists:flatten(io_lib:format("~b bytes, more than the ~b read: refused", [Size, Max]));
format_error({write, File, Reason}) ->
    lists:flatten(io_lib:format("cannot write ~ts: ~ts", [File, file:format_error(Reason)]));
format_error({not_regular, Type}) ->
    lists:flatten(io_lib:format("not a regular file (~ts): refused", [type(Type)]));
format_error(Reason) -> file:format_error(Reason).

type(device) -> "a device";
type(directory) -> "a directory";
type(symlink) -> "a symbolic link";
type(other) -> "a FIFO or socket";
type(T) -> atom_to_list(T).
